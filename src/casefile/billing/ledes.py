"""LEDES 1998B: the pipe-delimited e-billing file (LEDES Oversight Committee, "LEDES 1998B"
specification). Line 1 is `LEDES1998B[]`, line 2 the 24 field names, then one line per line
item; each line ends with `[]`. Dates are YYYYMMDD; amounts have two decimals and no currency
sign; INVOICE_TOTAL is the sum of LINE_ITEM_TOTAL (1998B carries no tax: a taxed invoice's
total here is before tax, as the format's later 1998BI adds tax fields)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from casefile.money import Money

FIELDS = (
    "INVOICE_DATE",
    "INVOICE_NUMBER",
    "CLIENT_ID",
    "LAW_FIRM_MATTER_ID",
    "INVOICE_TOTAL",
    "BILLING_START_DATE",
    "BILLING_END_DATE",
    "INVOICE_DESCRIPTION",
    "LINE_ITEM_NUMBER",
    "EXP/FEE/INV_ADJ_TYPE",
    "LINE_ITEM_NUMBER_OF_UNITS",
    "LINE_ITEM_ADJUSTMENT_AMOUNT",
    "LINE_ITEM_TOTAL",
    "LINE_ITEM_DATE",
    "LINE_ITEM_TASK_CODE",
    "LINE_ITEM_EXPENSE_CODE",
    "LINE_ITEM_ACTIVITY_CODE",
    "TIMEKEEPER_ID",
    "LINE_ITEM_DESCRIPTION",
    "LAW_FIRM_ID",
    "LINE_ITEM_UNIT_COST",
    "TIMEKEEPER_NAME",
    "TIMEKEEPER_CLASSIFICATION",
    "CLIENT_MATTER_ID",
)


def _clean(value: object) -> str:
    # A field may not hold the delimiters or a line break.
    return " ".join(str(value).replace("|", "/").replace("[]", "").split())


def render(
    invoice: Any, lines: list[Any], *, case: Any, firm_id: str, client_id: str, names: dict[str, str]
) -> str:
    c = invoice.currency

    def amount(minor: int) -> str:
        return str(Money.from_minor(minor, c).amount.quantize(Decimal("0.01")))

    totals = [line.amount_minor - line.discount_minor - line.write_off_minor for line in lines]
    head = {
        "INVOICE_DATE": (invoice.issued_on or invoice.created_at.date()).strftime("%Y%m%d"),
        "INVOICE_NUMBER": invoice.number or invoice.id,
        "CLIENT_ID": client_id,
        "LAW_FIRM_MATTER_ID": case.case_number,
        "INVOICE_TOTAL": amount(sum(totals)),
        "BILLING_START_DATE": invoice.period_start.strftime("%Y%m%d"),
        "BILLING_END_DATE": invoice.period_end.strftime("%Y%m%d"),
        "INVOICE_DESCRIPTION": f"Legal services: {case.title}",
    }
    rows = ["LEDES1998B[]", "|".join(FIELDS) + "[]"]
    for line, line_total in zip(lines, totals, strict=True):
        fee = line.kind == "fee"
        values = {
            **head,
            "LINE_ITEM_NUMBER": line.position,
            "EXP/FEE/INV_ADJ_TYPE": "F" if fee else "E",
            "LINE_ITEM_NUMBER_OF_UNITS": line.units,
            "LINE_ITEM_ADJUSTMENT_AMOUNT": amount(-(line.discount_minor + line.write_off_minor)),
            "LINE_ITEM_TOTAL": amount(line_total),
            "LINE_ITEM_DATE": line.work_date.strftime("%Y%m%d"),
            "LINE_ITEM_TASK_CODE": line.task_code or "",
            "LINE_ITEM_EXPENSE_CODE": line.expense_code or "",
            "LINE_ITEM_ACTIVITY_CODE": line.activity_code or "",
            "TIMEKEEPER_ID": line.user_id if fee and line.user_id else "",
            "LINE_ITEM_DESCRIPTION": line.description,
            "LAW_FIRM_ID": firm_id,
            "LINE_ITEM_UNIT_COST": amount(line.unit_cost_minor),
            "TIMEKEEPER_NAME": names.get(line.user_id or "", "") if fee else "",
            "TIMEKEEPER_CLASSIFICATION": "PT" if fee else "",
            "CLIENT_MATTER_ID": case.case_number,
        }
        rows.append("|".join(_clean(values[name]) for name in FIELDS) + "[]")
    return "\r\n".join(rows) + "\r\n"
