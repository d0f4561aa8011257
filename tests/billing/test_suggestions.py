"""Time drafted from the record: suggestions from the caller's own audit trail that day, per
matter, respecting current access; accepting one makes a draft entry."""

from __future__ import annotations

import datetime as dt

import httpx

from tests.support.assertions import ok
from tests.support.factories import new_case, upload
from tests.support.servers import Api
from tests.support.waiting import wait_until


def test_suggestions_from_my_day(api: Api, admin: httpx.Client) -> None:
    lawyer, token = api.make_user("attorney")
    notes_case, docs_case, walled_case = new_case(admin), new_case(admin), new_case(admin)
    today = dt.datetime.now(dt.UTC).date().isoformat()
    with api.client(token=token) as me:
        ok(me.post(f"/cases/{notes_case['id']}/notes", json={"body": "Strategy for the hearing"}), 201)
        ok(me.post(f"/cases/{notes_case['id']}/notes", json={"body": "Call summary"}), 201)
        ok(upload(me, docs_case["id"]), 201)
        ok(me.get(f"/cases/{walled_case['id']}"))
        # Someone else's work is not mine to bill.
        ok(admin.post(f"/cases/{docs_case['id']}/notes", json={"body": "Admin note"}), 201)

        def suggested() -> dict[str, dict]:
            found = {s["case_id"]: s for s in ok(me.get("/time-entries/suggestions", params={"date": today}))}
            return found if {notes_case["id"], docs_case["id"], walled_case["id"]} <= set(found) else {}

        found = wait_until(suggested)
        notes = found[notes_case["id"]]
        assert notes["description"] == "Wrote 2 notes" and notes["case_title"] == notes_case["title"]
        assert notes["seconds"] == 360 and len(notes["sessions"]) == 1  # one short session: one increment
        assert found[docs_case["id"]]["description"].startswith("Uploaded 1 document")
        assert "note" not in found[docs_case["id"]]["description"]

        # Walled off since: nothing from that matter any more.
        ok(
            admin.put(
                f"/cases/{walled_case['id']}/access",
                json={"access": "firm", "walls": [{"subject_type": "user", "subject_id": lawyer["id"]}]},
            )
        )
        again = ok(me.get("/time-entries/suggestions", params={"date": today}))
        assert walled_case["id"] not in {s["case_id"] for s in again}
        assert ok(me.get("/time-entries/suggestions", params={"date": "2001-01-01"})) == []

        # Accepting one is posting it as a draft entry.
        entry = ok(
            me.post(
                f"/cases/{notes_case['id']}/time-entries",
                json={"seconds": notes["seconds"], "description": notes["description"], "date": today},
            ),
            201,
        )
        assert entry["state"] == "draft" and entry["user_id"] == lawyer["id"]
        # Recording time is not itself work suggested.
        later = {s["case_id"]: s for s in ok(me.get("/time-entries/suggestions", params={"date": today}))}
        assert later[notes_case["id"]]["description"] == "Wrote 2 notes"
