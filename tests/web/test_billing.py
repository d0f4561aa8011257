"""The billing screens in a real browser (docs/web-app.md#billing): the header's timer, the
matter's time tab (quick entry, suggestions), invoices (draft, approve, pay, downloads, aging),
the trust ledger (a deposit, a refused overdraft, a transfer for an invoice) and the three-way
reconciliation; a user without billing permissions sees none of it and is refused by URL; a user
walled off a matter sees nothing of its billing. axe-core checks each new page."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.web.conftest import USER_PASSWORD, Web, serious_violations


def _today() -> str:
    return datetime.now(UTC).date().isoformat()


def _matter(web: Web, title: str, client: str) -> dict[str, str]:
    with web.api.admin() as admin:
        created = admin.post("/cases", json={"title": title, "client_name": client})
        assert created.status_code == 201, created.text
        return dict(created.json()["data"])


def _check(page: Page, problems: dict[str, list[str]], name: str) -> None:
    problems[name] = serious_violations(page)


def test_timer_quick_entry_and_suggestions(web: Web) -> None:
    user, email = web.user("attorney")
    case = _matter(web, "Hooli v. Initech: timekeeping", "Hooli Corporation")
    problems: dict[str, list[str]] = {}
    page = web.page()
    web.sign_in(page, email, USER_PASSWORD)
    timers = page.get_by_role("region", name="Timer")

    # Start a timer from the matter's header; it is shown on every page, and survives pausing.
    page.goto(f"/app/matters/{case['id']}")
    timers.get_by_role("button", name=f"Start timer on {case['title']}").click()
    running = timers.locator(".timer")
    expect(running).to_contain_text(case["title"])
    expect(running).to_contain_text("running")
    web.screenshot(page, "timer", full_page=False)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Matters").click()
    expect(page.get_by_role("heading", name="Matters", level=1)).to_be_visible()
    expect(timers.locator(".timer")).to_contain_text(case["title"])
    timers.get_by_role("button", name=re.compile("^Pause")).click()
    expect(timers.locator(".timer")).to_contain_text("paused")
    expect(page.get_by_role("heading", name="Matters", level=1)).to_be_visible()  # back where it was
    timers.get_by_role("button", name=re.compile("^Resume")).click()
    expect(timers.locator(".timer")).to_contain_text("running")
    # The API sees the one timer (the same row: it would survive a restart).
    token = web.api.login(email, USER_PASSWORD)["token"]
    with web.api.client(token=token) as api:
        listed = api.get("/timers").json()["data"]
        assert [(t["case_id"], t["running"]) for t in listed] == [(case["id"], True)]
    # Stopped, it is a draft time entry on the matter's time tab, and leaves the header.
    timers.get_by_role("button", name=re.compile("^Stop")).click()
    expect(page).to_have_url(re.compile(rf"/app/matters/{case['id']}/time\?recorded="))
    expect(page.get_by_role("status")).to_have_text("Recorded.")
    entries = page.locator("#time-entries tbody tr")
    expect(entries).to_have_count(1)
    expect(entries.first).to_contain_text("Timed work")
    expect(entries.first).to_contain_text("Draft")
    expect(entries.first).to_contain_text("0.1")  # a few seconds bill one 6-minute increment
    expect(timers.locator(".timer")).to_have_count(0)

    # Quick entry from one line.
    page.get_by_label("Time worked").fill("1h20 drafted answer to motion")
    page.get_by_role("button", name="Record time").click()
    row = page.locator("#time-entries tbody tr", has_text="drafted answer to motion")
    expect(row).to_contain_text("1.4")  # 80 minutes, billed in 6-minute increments: 84
    # A line it cannot read: the API's refusal, on the form, with what was typed kept.
    page.get_by_label("Time worked").fill("drafted something")
    page.get_by_role("button", name="Record time").click()
    expect(page.get_by_role("alert")).to_contain_text("text:")
    expect(page.get_by_label("Time worked")).to_have_value("drafted something")
    _check(page, problems, "time tab, refused quick entry")

    # Suggestions for today from what the user did on the matter (a note written here).
    page.get_by_role("navigation", name="Matter sections").get_by_role("link", name="Notes").click()
    page.get_by_label("New note").fill("Called opposing counsel about the schedule.")
    page.get_by_role("button", name="Add note").click()
    page.get_by_role("navigation", name="Matter sections").get_by_role("link", name="Time").click()
    suggestion = page.locator("#suggestions li")
    expect(suggestion).to_have_count(1)
    expect(suggestion).to_contain_text("note")
    web.screenshot(page, "matter-time")
    _check(page, problems, "time tab")
    suggestion.get_by_role("button", name="Add as draft").click()
    expect(page.locator("#time-entries tbody tr")).to_have_count(3)
    with web.api.client(token=token) as api:
        recorded = api.get(f"/cases/{case['id']}/time-entries").json()["data"]
    assert sorted(e["state"] for e in recorded) == ["draft"] * 3
    assert {e["user_id"] for e in recorded} == {user["id"]}
    assert "drafted answer to motion" in {e["description"] for e in recorded}
    # A day with nothing done: the empty state.
    page.get_by_label("Day", exact=True).fill("2020-01-01")
    page.get_by_role("button", name="Show suggestions").click()
    expect(page.get_by_text("Nothing on this matter to suggest for 2020-01-01.")).to_be_visible()
    # On a phone, with a timer running in the header: nothing wider than the screen.
    phone = web.page(width=390, height=844)
    web.sign_in(phone, email, USER_PASSWORD)
    phone.goto(f"/app/matters/{case['id']}/time")
    phone.get_by_role("region", name="Timer").get_by_role("button", name=re.compile("^Start timer")).click()
    expect(phone.get_by_role("region", name="Timer").locator(".timer")).to_contain_text("running")
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    _check(phone, problems, "time tab on a phone")
    assert {k: v for k, v in problems.items() if v} == {}


def test_invoice_approve_pay_and_trust_money(web: Web) -> None:
    user, email = web.user("attorney")
    case = _matter(web, "Hooli: licence dispute", "Hooli Inc")
    token = web.api.login(email, USER_PASSWORD)["token"]
    with web.api.admin() as admin:
        rate = admin.put("/billing/rates", json={"user_id": user["id"], "amount": "300.00"})
        assert rate.status_code == 200, rate.text
    with web.api.client(token=token) as api:
        for text in ("2h reviewed licence", "0.5 call with client"):
            made = api.post(f"/cases/{case['id']}/time-entries", json={"text": text, "state": "ready"})
            assert made.status_code == 201, made.text
    problems: dict[str, list[str]] = {}
    page = web.page()
    web.sign_in(page, email, USER_PASSWORD)

    # A draft invoice from the matter's unbilled entries of a period.
    page.goto(f"/app/matters/{case['id']}/time")
    start = (datetime.now(UTC).date() - timedelta(days=30)).isoformat()
    page.get_by_label("From", exact=True).fill("2020-01-01")
    page.get_by_label("To", exact=True).fill("2020-01-31")
    page.get_by_role("button", name="Draft invoice").click()
    expect(page.get_by_role("alert")).to_contain_text("Nothing unbilled in this period")
    page.get_by_label("From", exact=True).fill(start)
    page.get_by_label("To", exact=True).fill(_today())
    page.get_by_role("button", name="Draft invoice").click()
    expect(page.get_by_role("heading", name="Invoice (draft)", level=1)).to_be_visible()
    expect(page.locator("#lines tbody tr")).to_have_count(2)
    expect(page.locator("#totals")).to_contain_text("750.00 USD")  # 2.5 h at 300.00
    # Only the moves a draft allows, and no payment yet.
    expect(page.locator("#moves button")).to_have_text(["Approve", "Void"])
    expect(page.get_by_role("form", name="Record a payment")).to_have_count(0)
    _check(page, problems, "draft invoice")
    page.get_by_role("button", name="Approve").click()
    heading = page.get_by_role("heading", level=1)
    expect(heading).to_have_text(re.compile(r"^Invoice INV-\d{6}$"))
    number = heading.inner_text().removeprefix("Invoice ")
    invoice_id = page.url.rsplit("/", 1)[1]
    expect(page.locator("#moves button")).to_have_text(["Mark sent", "Void"])
    # A payment of part of it.
    page.get_by_label("Amount (USD)").fill("250.00")
    page.get_by_label("Reference").fill("Wire 4471")
    page.get_by_role("button", name="Record payment").click()
    expect(page.locator("#payments")).to_contain_text("250.00 USD")
    expect(page.locator("#totals .balance")).to_have_text("500.00 USD")
    # More than the balance: the API's refusal, shown on the invoice.
    page.get_by_label("Amount (USD)").fill("900.00")
    page.get_by_role("button", name="Record payment").click()
    expect(page.get_by_role("alert")).to_contain_text("balance, 500.00")
    web.screenshot(page, "invoice-overpayment")
    page.goto(f"/app/invoices/{invoice_id}")
    web.screenshot(page, "invoice")
    _check(page, problems, "approved invoice")
    # The PDF and LEDES downloads, exactly the API's.
    with page.expect_download() as pdf:
        page.get_by_role("link", name="Download PDF").click()
    assert Path(pdf.value.path()).read_bytes().startswith(b"%PDF")
    with page.expect_download() as ledes:
        page.get_by_role("link", name="Download LEDES 1998B").click()
    assert Path(ledes.value.path()).read_bytes().startswith(b"LEDES1998B[]")
    # The list and the aging report.
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Invoices").click()
    expect(page.locator("#invoices")).to_contain_text(number)
    page.get_by_label("State").select_option("approved")
    page.get_by_role("button", name="Show").click()
    expect(page.locator("#invoices tbody tr", has_text=number)).to_contain_text("500.00 USD")
    web.screenshot(page, "invoices")
    _check(page, problems, "invoices")
    page.get_by_role("link", name="Accounts receivable aging").click()
    expect(page.locator("#aging-invoices tbody tr", has_text=number)).to_contain_text("0-30")
    web.screenshot(page, "aging")
    _check(page, problems, "aging")

    # Trust: a deposit, a refused overdraft, then a transfer that pays the invoice.
    page.goto(f"/app/matters/{case['id']}/trust")
    expect(page.locator("#trust-balance")).to_have_text("nothing")
    page.get_by_label("Deposit amount").fill("600.00")
    page.get_by_role("form", name="Deposit").get_by_label("Reference").fill("CHK-1001")
    page.get_by_role("button", name="Record deposit").click()
    expect(page.locator("#trust-balance")).to_have_text("600.00 USD")
    page.get_by_label("Payment out amount").fill("800.00")
    page.get_by_role("form", name="Payment out").get_by_label("Reference").fill("CHK-2002")
    page.get_by_role("button", name="Record payment out").click()
    expect(page.get_by_role("alert")).to_have_text("Insufficient trust funds on this matter")
    expect(page.locator("#trust-balance")).to_have_text("600.00 USD")
    expect(page.get_by_label("Payment out amount")).to_have_value("800.00")
    web.screenshot(page, "matter-trust")
    _check(page, problems, "trust tab, refused overdraft")
    form = page.get_by_role("form", name="Transfer to operating for an invoice")
    expect(form.get_by_label("Transfer amount")).to_have_value("500.00")
    form.get_by_label("Reference").fill("TRF-1")
    page.get_by_role("button", name="Transfer to operating").click()
    expect(page.locator("#trust-balance")).to_have_text("100.00 USD")
    expect(page.locator("#trust-entries tbody tr")).to_have_count(2)
    page.goto(f"/app/invoices/{invoice_id}")
    expect(page.locator(".meta .status")).to_have_text("Paid")
    expect(page.locator("#moves")).to_have_count(0)
    with web.api.client(token=token) as api:
        ledger = api.get(f"/cases/{case['id']}/trust")
        assert ledger.headers["X-Trust-Balance"] == "USD 100.00"
        assert api.get(f"/invoices/{invoice_id}").json()["data"]["state"] == "paid"
    # The client's ledger across matters; the reconciliation is an administrator's.
    page.goto(f"/app/matters/{case['id']}/trust")
    page.get_by_role("link", name="The client's ledger across their matters").click()
    expect(page.locator("#trust-entries tbody tr")).to_have_count(2)
    expect(page.get_by_role("link", name="Three-way reconciliation")).to_have_count(0)
    response = page.goto("/app/trust/reconciliation")
    assert response is not None and response.status == 403

    admin_page = web.page()
    web.sign_in(admin_page)
    admin_page.goto("/app/trust")
    web.screenshot(admin_page, "trust-ledger")
    _check(admin_page, problems, "trust ledger")
    admin_page.get_by_role("link", name="Three-way reconciliation").click()
    with web.api.admin() as admin:
        month = datetime.now(UTC).strftime("%Y-%m")
        journal = admin.get("/trust/reconciliation", params={"month": month, "bank_balance": "0"}).json()[
            "data"
        ]["journal_balance"]
    admin_page.locator("#rec-month").fill(month)
    admin_page.get_by_label("Bank statement balance at the month's end").fill("1.00")
    admin_page.get_by_role("button", name="Reconcile").click()
    expect(admin_page.locator("#verdict")).to_contain_text("The three do not agree")
    expect(admin_page.locator("#differences")).to_contain_text("Bank statement against the journal")
    admin_page.get_by_label("Bank statement balance at the month's end").fill(journal)
    admin_page.get_by_role("button", name="Reconcile").click()
    expect(admin_page.locator("#verdict")).to_contain_text("The three agree")
    expect(admin_page.locator("#three-way")).to_contain_text(f"{journal} USD")
    web.screenshot(admin_page, "reconciliation")
    _check(admin_page, problems, "reconciliation")
    assert {k: v for k, v in problems.items() if v} == {}


def test_without_billing_permissions_no_screen_and_refused(web: Web) -> None:
    _, email = web.user("viewer")
    case = _matter(web, "Pied Piper: compression patent", "Pied Piper")
    page = web.page()
    web.sign_in(page, email, USER_PASSWORD)
    page.goto(f"/app/matters/{case['id']}")
    navigation = page.get_by_role("navigation", name="Main")
    expect(navigation.get_by_role("link", name="Matters")).to_be_visible()
    for name in ("Invoices", "Trust"):
        expect(navigation.get_by_role("link", name=name)).to_have_count(0)
    tabs = page.get_by_role("navigation", name="Matter sections")
    expect(tabs.get_by_role("link", name="Notes")).to_be_visible()
    for name in ("Time", "Trust"):
        expect(tabs.get_by_role("link", name=name, exact=True)).to_have_count(0)
    expect(page.get_by_role("region", name="Timer")).to_have_count(0)
    paths = (
        f"/app/matters/{case['id']}/time",
        f"/app/matters/{case['id']}/trust",
        "/app/invoices",
        "/app/invoices/aging",
        "/app/invoices/inv_anything",
        "/app/invoices/inv_anything/pdf",
        "/app/trust",
        "/app/trust/reconciliation",
    )
    for path in paths:
        response = page.goto(path)
        assert response is not None and response.status == 403, path
        expect(page.get_by_role("heading", level=1)).to_have_text("Not allowed")
    # A form posted anyway (with the session's CSRF token) is refused alike.
    page.goto("/app")
    csrf = page.locator("form.signout input[name=csrf_token]").get_attribute("value")
    for action, form in (
        ("/app/timers", {"case_id": case["id"]}),
        (f"/app/matters/{case['id']}/time", {"text": "1h work"}),
        (f"/app/matters/{case['id']}/trust/deposits", {"amount": "10.00", "reference": "x"}),
    ):
        answer = page.request.post(action, form={**form, "csrf_token": csrf or ""}, max_redirects=0)
        assert answer.status == 403, action


def test_a_walled_user_sees_nothing_of_the_matters_billing(web: Web) -> None:
    walled, walled_email = web.user("attorney")
    _, colleague_email = web.user("attorney")
    case = _matter(web, "Project Heron: acquisition", "Heron Capital")
    walled_token = web.api.login(walled_email, USER_PASSWORD)["token"]
    with web.api.client(token=walled_token) as api:  # before the wall: a timer of theirs on it
        assert (
            api.post("/timers", json={"case_id": case["id"], "description": "Heron diligence"}).status_code
            == 201
        )
    with web.api.admin() as admin:
        entry = admin.post(f"/cases/{case['id']}/time-entries", json={"text": "3h Heron diligence memo"})
        assert entry.status_code == 201, entry.text
        drafted = admin.post(f"/cases/{case['id']}/invoices", json={"start": "2020-01-01", "end": _today()})
        assert drafted.status_code == 201, drafted.text
        invoice = admin.post(f"/invoices/{drafted.json()['data']['id']}/approve").json()["data"]
        deposit = admin.post(
            f"/cases/{case['id']}/trust/deposits", json={"amount": "70.00", "reference": "HERON-DEP"}
        )
        assert deposit.status_code == 201, deposit.text
        walls = [{"subject_type": "user", "subject_id": walled["id"], "reason": "acted for the seller"}]
        assert (
            admin.put(f"/cases/{case['id']}/access", json={"access": "firm", "walls": walls}).status_code
            == 200
        )
    traces = (case["title"], case["id"], case["case_number"], invoice["id"], invoice["number"], "HERON-DEP")
    traces += ("Heron diligence",)

    # A colleague sees it, so the pages below do show what exists.
    colleague = web.page()
    web.sign_in(colleague, colleague_email, USER_PASSWORD)
    colleague.goto("/app/invoices")
    expect(colleague.locator("#invoices")).to_contain_text(invoice["number"])
    colleague.goto("/app/trust")
    expect(colleague.locator("#trust-entries")).to_contain_text("HERON-DEP")

    page = web.page()
    web.sign_in(page, walled_email, USER_PASSWORD)
    for path in (
        "/app",
        "/app/invoices",
        "/app/invoices?state=approved",
        "/app/invoices/aging",
        "/app/trust",
    ):
        page.goto(path)
        assert not [t for t in traces if t in page.content()], path
    for path in (
        f"/app/matters/{case['id']}/time",
        f"/app/matters/{case['id']}/trust",
        f"/app/invoices/{invoice['id']}",
        f"/app/invoices/{invoice['id']}/pdf",
        f"/app/invoices/{invoice['id']}/ledes",
    ):
        response = page.goto(path)
        assert response is not None and response.status == 404, path
        assert not [t for t in traces if t in page.content()], path
    # The reconciliation (an administrator's) and the API: refused alike.
    with web.api.client(token=walled_token) as api:
        assert api.get(f"/invoices/{invoice['id']}").status_code == 404
        assert api.get(f"/cases/{case['id']}/trust").status_code == 404
