"""The invoice as a PDF, drawn with fpdf2 (pure Python, its core Helvetica font: Latin-1 text;
anything else is shown as `?` rather than failing)."""

from __future__ import annotations

from typing import Any

from fpdf import FPDF
from fpdf.enums import XPos, YPos

from casefile.money import text


def _latin(value: str) -> str:
    return value.encode("latin-1", "replace").decode("latin-1")


def render(
    invoice: Any, lines: list[Any], *, case: Any, firm: str, client: str, names: dict[str, str]
) -> bytes:
    c = invoice.currency
    pdf = FPDF(format="A4")
    pdf.set_title(f"Invoice {invoice.number or 'draft'}")
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 18)
    pdf.cell(0, 10, _latin(firm), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font("Helvetica", "", 10)
    status = "" if invoice.state != "draft" else " (DRAFT)"
    pdf.cell(0, 6, f"Invoice {invoice.number or '-'}{status}", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    issued = invoice.issued_on.isoformat() if invoice.issued_on else "-"
    due = invoice.due_on.isoformat() if invoice.due_on else "-"
    pdf.cell(0, 6, f"Date: {issued}    Due: {due}", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.cell(0, 6, _latin(f"Client: {client}"), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.cell(0, 6, _latin(f"Matter: {case.case_number} - {case.title}"), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    period = f"Period: {invoice.period_start.isoformat()} to {invoice.period_end.isoformat()}"
    pdf.cell(0, 6, period, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.ln(4)
    pdf.set_font("Helvetica", "", 8)
    with pdf.table(
        col_widths=(20, 26, 64, 12, 20, 20, 28),
        text_align=("LEFT", "LEFT", "LEFT", "RIGHT", "RIGHT", "RIGHT", "RIGHT"),
    ) as table:
        table.row(["Date", "By", "Description", "Units", "Rate", "Adjust.", f"Amount {c}"])
        for line in lines:
            net = line.amount_minor - line.discount_minor - line.write_off_minor
            who = names.get(line.user_id or "", "") if line.kind == "fee" else line.expense_code or "Expense"
            table.row(
                [
                    line.work_date.isoformat(),
                    _latin(who),
                    _latin(line.description),
                    line.units,
                    text(line.unit_cost_minor, c),
                    text(-(line.discount_minor + line.write_off_minor), c),
                    text(net, c),
                ]
            )
    pdf.ln(4)
    pdf.set_font("Helvetica", "", 10)
    rows = [
        ("Subtotal", invoice.subtotal_minor),
        (f"Discount ({invoice.discount_percent}%)", -invoice.discount_minor),
        ("Write-offs", -invoice.write_off_minor),
        (f"Tax ({invoice.tax_percent}%)", invoice.tax_minor),
        ("Total", invoice.total_minor),
        ("Paid", -invoice.paid_minor),
        ("Balance due", invoice.total_minor - invoice.paid_minor),
    ]
    for label, minor in rows:
        pdf.set_font("Helvetica", "B" if label in ("Total", "Balance due") else "", 10)
        pdf.cell(150, 6, label, align="R")
        pdf.cell(0, 6, f"{text(minor, c)} {c}", align="R", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    return bytes(pdf.output())
