//! An invoice as CSV: one row per line, amounts with exactly the currency's
//! minor-unit digits, times in RFC 3339; and a usage report as CSV.

use crate::invoice::Invoice;

/// The columns, in order.
pub const HEADER: [&str; 13] = [
    "kind",
    "product",
    "sku",
    "project",
    "resource_id",
    "resource_name",
    "quantity",
    "unit",
    "unit_price",
    "amount",
    "currency",
    "start",
    "end",
];

/// The invoice's lines as CSV (the total is their sum).
pub fn invoice_csv(invoice: &Invoice) -> Result<Vec<u8>, csv::Error> {
    let mut out = csv::Writer::from_writer(Vec::new());
    out.write_record(HEADER)?;
    for line in &invoice.lines {
        out.write_record([
            line.kind.as_str(),
            &inert(&line.product),
            &line.sku,
            &inert(&line.project),
            &line.resource_id,
            &inert(&line.resource_name),
            &line.quantity.normalize().to_string(),
            &line.unit,
            &line.unit_price.normalize().to_string(),
            &invoice.currency.format(line.amount),
            &invoice.currency.code,
            &line.start.to_rfc3339(),
            &line.end.to_rfc3339(),
        ])?;
    }
    out.into_inner().map_err(|e| e.into_error().into())
}

/// The usage report's columns, in order.
pub const USAGE_HEADER: [&str; 10] =
    ["day", "project", "resource_id", "resource_name", "sku", "product", "hours", "unit_price", "amount", "currency"];

/// One row of a usage report, as the gateway formatted it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageRow {
    pub day: String,
    pub project: String,
    pub resource_id: String,
    pub resource_name: String,
    pub sku: String,
    pub product: String,
    pub hours: String,
    pub unit_price: String,
    pub amount: String,
    pub currency: String,
}

/// A usage report as CSV, names kept as text like an invoice's.
pub fn usage_csv(rows: &[UsageRow]) -> Result<Vec<u8>, csv::Error> {
    let mut out = csv::Writer::from_writer(Vec::new());
    out.write_record(USAGE_HEADER)?;
    for row in rows {
        out.write_record([
            row.day.as_str(),
            &inert(&row.project),
            &row.resource_id,
            &inert(&row.resource_name),
            &row.sku,
            &inert(&row.product),
            &row.hours,
            &row.unit_price,
            &row.amount,
            &row.currency,
        ])?;
    }
    out.into_inner().map_err(|e| e.into_error().into())
}

/// Text a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab or
/// carriage return first) gets a leading `'`, so it stays text. Only for
/// names: amounts are numbers and keep their sign.
fn inert(text: &str) -> std::borrow::Cow<'_, str> {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{text}").into() } else { text.into() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::rating::{Usage, rate};
    use rust_decimal::Decimal;

    #[test]
    fn a_line_per_row_that_a_reader_sums_to_the_total() {
        let catalog = Catalog::embedded();
        let at = |t: &str| t.parse().unwrap();
        let usage = Usage {
            sku: "bm.small.hour".into(),
            project: "web, \"shop\"".into(),
            resource_id: "cl_1".into(),
            resource_name: "prod".into(),
            instance: "n1".into(),
            seconds: Decimal::from(7200),
            start: at("2026-12-01T00:00:00Z"),
            end: at("2026-12-01T02:00:00Z"),
        };
        let lines = rate(&catalog.versions()[0], &catalog.currency, &[usage]).unwrap();
        let invoice =
            Invoice::new(catalog.currency.clone(), at("2026-12-01T00:00:00Z"), at("2027-01-01T00:00:00Z"), lines);
        let bytes = invoice_csv(&invoice).unwrap();
        let mut reader = csv::Reader::from_reader(bytes.as_slice());
        assert_eq!(reader.headers().unwrap().iter().collect::<Vec<_>>(), HEADER);
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 1);
        assert_eq!(&rows[0][3], "web, \"shop\"", "quoted, not split");
        assert_eq!(&rows[0][6], "2");
        assert_eq!(&rows[0][9], "0.36");
        assert_eq!(&rows[0][11], "2026-12-01T00:00:00+00:00");
    }

    #[test]
    fn names_a_spreadsheet_would_run_stay_text() {
        assert_eq!(inert("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(inert("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(inert("web"), "web");
    }
}
