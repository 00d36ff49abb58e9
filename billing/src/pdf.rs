//! An invoice as a PDF: A4 pages of text set in Helvetica, one of the PDF
//! standard fonts every reader has (nothing is embedded or downloaded).
//! The output depends only on its input, byte for byte.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use crate::invoice::{Invoice, LineKind};

/// What the page says about the invoice beyond its lines.
#[derive(Debug, Clone)]
pub struct PdfHeader {
    /// `MOKE-2027-000042`; `None` for a draft.
    pub number: Option<String>,
    /// `draft`, `finalized` or `void`.
    pub status: String,
    pub organization: String,
    pub finalized_at: Option<DateTime<Utc>>,
}

const PAGE_WIDTH: f32 = 595.0;
const PAGE_HEIGHT: f32 = 842.0;
const MARGIN: f32 = 50.0;
const ROW: f32 = 14.0;
const TEXT_SIZE: f32 = 9.0;

/// Columns: left edge (or right edge for right-aligned ones) and the most
/// characters shown.
const COLUMNS: [(&str, f32, usize, bool); 5] = [
    ("Product", MARGIN, 42, false),
    ("Project", 270.0, 18, false),
    ("Resource", 360.0, 18, false),
    ("Quantity", 490.0, 16, true),
    ("Amount", PAGE_WIDTH - MARGIN, 16, true),
];

/// Width of `text` in Helvetica at `size` points (the font's metrics for
/// ASCII; anything else is written as `?`).
fn width(text: &str, size: f32) -> f32 {
    let units: u32 = text
        .chars()
        .map(|c| match c {
            ' ' | '.' | ',' | ':' | ';' | '!' | 'i' | 'j' | 'l' | '/' | 'I' | '\'' => 278,
            'f' | 't' | '(' | ')' | '[' | ']' | '-' | 'r' => 333,
            'm' | 'M' => 833,
            'w' | 'W' => 944,
            'A'..='Z' => 667,
            _ => 556,
        })
        .sum();
    units as f32 * size / 1000.0
}

/// `text` as a PDF literal string: printable ASCII only, `(`, `)` and `\`
/// escaped, cut to `max` characters.
fn literal(text: &str, max: usize) -> String {
    let mut out = String::from("(");
    let count = text.chars().count();
    for (i, c) in text.chars().enumerate() {
        if i + 1 == max && count > max {
            out.push_str("...");
            break;
        }
        match c {
            '(' | ')' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            _ => out.push('?'),
        }
    }
    out.push(')');
    out
}

/// One page's drawing instructions.
#[derive(Default)]
struct Page {
    content: String,
}

impl Page {
    fn text(&mut self, x: f32, y: f32, size: f32, bold: bool, text: &str, max: usize) {
        let font = if bold { "F2" } else { "F1" };
        let _ = writeln!(self.content, "BT /{font} {size} Tf {x:.2} {y:.2} Td {} Tj ET", literal(text, max));
    }

    fn right(&mut self, right: f32, y: f32, size: f32, bold: bool, text: &str, max: usize) {
        let shown: String = text.chars().take(max).collect();
        self.text(right - width(&shown, size), y, size, bold, &shown, max);
    }

    fn rule(&mut self, y: f32) {
        let _ = writeln!(self.content, "0.8 G 0.5 w {MARGIN} {y:.2} m {:.2} {y:.2} l S 0 G", PAGE_WIDTH - MARGIN);
    }
}

/// The invoice as a PDF document.
pub fn invoice_pdf(invoice: &Invoice, header: &PdfHeader) -> Vec<u8> {
    let money = |amount| format!("{} {}", invoice.currency.format(amount), invoice.currency.code);
    let title = match &header.number {
        Some(number) => format!("Invoice {number}"),
        None => format!("Draft invoice {}", invoice.period_start.format("%B %Y")),
    };
    let mut pages = vec![Page::default()];
    let mut y = PAGE_HEIGHT - MARGIN - 18.0;
    {
        let page = pages.last_mut().expect("a page");
        page.text(MARGIN, y, 18.0, true, &title, 60);
        y -= 28.0;
        let last_day = invoice.period_end - chrono::Duration::days(1);
        let facts = [
            ("Organization", header.organization.clone()),
            ("Period", format!("{} to {} (UTC)", invoice.period_start.format("%Y-%m-%d"), last_day.format("%Y-%m-%d"))),
            ("Status", header.status.clone()),
            (
                "Issued",
                header.finalized_at.map_or_else(
                    || "not yet: usage is still being added".to_string(),
                    |at| at.format("%Y-%m-%d").to_string(),
                ),
            ),
        ];
        for (label, value) in facts {
            page.text(MARGIN, y, 10.0, true, label, 20);
            page.text(MARGIN + 90.0, y, 10.0, false, &value, 70);
            y -= ROW;
        }
        y -= ROW;
    }
    let heading = |page: &mut Page, y: f32| {
        for (name, x, max, right) in COLUMNS {
            if right {
                page.right(x, y, TEXT_SIZE, true, name, max);
            } else {
                page.text(x, y, TEXT_SIZE, true, name, max);
            }
        }
        page.rule(y - 4.0);
    };
    heading(pages.last_mut().expect("a page"), y);
    y -= ROW + 2.0;
    for line in &invoice.lines {
        if y < MARGIN + 4.0 * ROW {
            pages.push(Page::default());
            y = PAGE_HEIGHT - MARGIN - TEXT_SIZE;
            heading(pages.last_mut().expect("a page"), y);
            y -= ROW + 2.0;
        }
        let page = pages.last_mut().expect("a page");
        let product = match line.kind {
            LineKind::Adjustment => format!("{} (adjustment for {})", line.product, line.start.format("%Y-%m")),
            _ => line.product.clone(),
        };
        let quantity = match line.kind {
            LineKind::Credit => String::new(),
            _ => format!("{} {}", line.quantity.normalize(), line.unit),
        };
        let cells = [product, line.project.clone(), line.resource_name.clone(), quantity, money(line.amount)];
        for ((_, x, max, right), cell) in COLUMNS.iter().zip(cells) {
            if *right {
                page.right(*x, y, TEXT_SIZE, false, &cell, *max);
            } else {
                page.text(*x, y, TEXT_SIZE, false, &cell, *max);
            }
        }
        y -= ROW;
    }
    if y < MARGIN + 4.0 * ROW {
        pages.push(Page::default());
        y = PAGE_HEIGHT - MARGIN - TEXT_SIZE;
    }
    let page = pages.last_mut().expect("a page");
    page.rule(y + ROW - 4.0);
    for (label, amount, bold) in
        [("Usage", invoice.subtotal(), false), ("Credits", invoice.credits(), false), ("Total", invoice.total(), true)]
    {
        page.right(430.0, y, 10.0, bold, label, 20);
        page.right(PAGE_WIDTH - MARGIN, y, 10.0, bold, &money(amount), 24);
        y -= ROW;
    }
    document(&title, &pages)
}

/// The PDF file: catalog, page tree, the two fonts, the info dictionary,
/// then each page and its content stream, and the cross-reference table.
fn document(title: &str, pages: &[Page]) -> Vec<u8> {
    let count = pages.len();
    let page_id = |i: usize| 6 + 2 * i;
    let kids: Vec<String> = (0..count).map(|i| format!("{} 0 R", page_id(i))).collect();
    let mut objects = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        format!("<< /Type /Pages /Kids [{}] /Count {count} >>", kids.join(" ")),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_string(),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>".to_string(),
        format!("<< /Title {} /Producer (Moke) >>", literal(title, 80)),
    ];
    for (i, page) in pages.iter().enumerate() {
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {PAGE_WIDTH} {PAGE_HEIGHT}] \
             /Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents {} 0 R >>",
            page_id(i) + 1
        ));
        objects.push(format!("<< /Length {} >>\nstream\n{}endstream", page.content.len(), page.content));
    }
    let mut out = String::from("%PDF-1.4\n");
    let mut offsets = Vec::with_capacity(objects.len());
    for (i, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        let _ = write!(out, "{} 0 obj\n{object}\nendobj\n", i + 1);
    }
    let xref = out.len();
    let _ = write!(out, "xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1);
    for offset in offsets {
        let _ = writeln!(out, "{offset:010} 00000 n ");
    }
    let _ =
        write!(out, "trailer\n<< /Size {} /Root 1 0 R /Info 5 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1);
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::rating::{Usage, rate};
    use rust_decimal::Decimal;

    fn invoice(lines: usize) -> Invoice {
        let catalog = Catalog::embedded();
        let at = |t: &str| t.parse().unwrap();
        let usage: Vec<Usage> = (0..lines)
            .map(|i| Usage {
                sku: "bm.small.hour".into(),
                project: "web (main)".into(),
                resource_id: format!("np_{i}"),
                resource_name: format!("pool-{i}"),
                instance: "n1".into(),
                seconds: Decimal::from(7200),
                start: at("2026-12-01T00:00:00Z"),
                end: at("2026-12-01T02:00:00Z"),
            })
            .collect();
        let lines = rate(&catalog.versions()[0], &catalog.currency, &usage).unwrap();
        Invoice::new(catalog.currency.clone(), at("2026-12-01T00:00:00Z"), at("2027-01-01T00:00:00Z"), lines)
    }

    fn header() -> PdfHeader {
        PdfHeader {
            number: Some("MOKE-2027-000001".into()),
            status: "finalized".into(),
            organization: "Acme \\ (Ltd) é".into(),
            finalized_at: Some("2027-01-03T00:00:00Z".parse().unwrap()),
        }
    }

    /// Every object the cross-reference table names starts where it says.
    fn check_xref(pdf: &[u8]) -> usize {
        let text = String::from_utf8(pdf.to_vec()).expect("ASCII");
        let start: usize = text.rsplit("startxref\n").next().unwrap().lines().next().unwrap().parse().unwrap();
        assert!(text[start..].starts_with("xref\n"));
        let entries: Vec<&str> = text[start..].lines().skip(3).take_while(|l| l.ends_with(" n ")).collect();
        for (i, entry) in entries.iter().enumerate() {
            let offset: usize = entry[..10].parse().unwrap();
            assert!(text[offset..].starts_with(&format!("{} 0 obj\n", i + 1)), "object {}", i + 1);
        }
        entries.len()
    }

    #[test]
    fn a_pdf_whose_table_of_objects_is_right() {
        let pdf = invoice_pdf(&invoice(3), &header());
        assert!(pdf.starts_with(b"%PDF-1.4\n") && pdf.ends_with(b"%%EOF\n"));
        assert_eq!(check_xref(&pdf), 7, "five shared objects and one page with its content");
        let text = String::from_utf8(pdf.clone()).unwrap();
        assert!(text.contains("(Acme \\\\ \\(Ltd\\) ?)"), "escaped, non-ASCII replaced");
        assert!(text.contains("(Invoice MOKE-2027-000001)"));
        assert_eq!(pdf, invoice_pdf(&invoice(3), &header()), "the same bytes every time");
    }

    #[test]
    fn long_invoices_go_on_over_pages() {
        let pdf = invoice_pdf(&invoice(120), &header());
        let objects = check_xref(&pdf);
        assert!(objects >= 5 + 2 * 3, "three pages or more: {objects} objects");
    }
}
