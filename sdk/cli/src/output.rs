//! How answers are printed: `-o table` (the default: one row per item, the
//! fields people scan), `-o json` or `-o yaml` (the whole answer, for
//! scripts). Errors go to stderr as the problem's detail and field errors.

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

use moke_sdk::{Error, ResponseValue};
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
    Yaml,
}

/// Columns a table prefers, in order, when an item has them.
const PREFERRED: [&str; 8] = ["id", "name", "status", "role", "email", "kind", "region", "created_at"];
/// At most this many columns, so a row fits a terminal.
const MAX_COLUMNS: usize = 6;

/// Prints one answer or a list as it streams in.
pub struct Printer {
    pub format: Format,
    /// A list's items, gathered so the table's columns line up.
    rows: RefCell<Vec<Value>>,
    /// The last single answer, for `--wait` to follow when it is an Operation.
    answer: Rc<RefCell<Option<Value>>>,
    /// Keep a single answer instead of printing it (`--wait` prints the end).
    hold_answer: bool,
    /// A dry run's plan, once answered: the generated command then fails to
    /// read the answer as its own, which is not an error to print.
    plan: Option<moke_sdk::PlanSlot>,
}

impl Printer {
    pub fn new(format: Format) -> Printer {
        Printer { format, rows: RefCell::new(Vec::new()), answer: Rc::default(), hold_answer: false, plan: None }
    }

    /// A printer that keeps a single answer rather than printing it.
    pub fn holding_answer(format: Format) -> Printer {
        Printer { hold_answer: true, ..Printer::new(format) }
    }

    /// This printer for a dry run whose plan arrives in `plan`.
    pub fn quiet_for(self, plan: moke_sdk::PlanSlot) -> Printer {
        Printer { plan: Some(plan), ..self }
    }

    /// A dry run's plan: as a table, each change and each Operation's steps
    /// and spec changes; otherwise the whole plan.
    pub fn print_plan(&self, plan: &moke_sdk::types::DryRunView) {
        if self.format != Format::Table {
            return self.print(plan);
        }
        let mut text = String::from("Dry run: nothing was changed.\n");
        if plan.changes.is_empty() {
            text += "Nothing would change.\n";
        }
        for change in &plan.changes {
            text += &format!(
                "would {} {}\n",
                change.action,
                change.resource_id.as_deref().unwrap_or(&change.resource_type)
            );
        }
        for operation in &plan.operations {
            text +=
                &format!("\nOperation {} on {} {}:\n", operation.kind, operation.target.type_, operation.target.name);
            for change in &operation.diff {
                let show = |v: &Option<Value>| v.as_ref().map_or("(none)".to_string(), Value::to_string);
                text += &format!("  {}: {} -> {}\n", change.path, show(&change.before), show(&change.after));
            }
            for (n, step) in operation.steps.iter().enumerate() {
                text += &format!("  {}. {step}\n", n + 1);
            }
        }
        if let Some(approval) = &plan.approval {
            text += &format!(
                "\nIt would wait for approval (rule {} of policy version {}): an organization {} other than you \
                 decides within {} h, and nothing changes until then.\n",
                approval.rule, approval.policy_version, approval.approver_role, approval.expires_after_hours
            );
        }
        let _ = std::io::stdout().write_all(text.as_bytes());
    }

    /// Where the last single answer will be, once the command has run.
    pub fn answer(&self) -> Rc<RefCell<Option<Value>>> {
        self.answer.clone()
    }

    /// Prints `value` (any answer) in the chosen format.
    pub fn print<T: Serialize>(&self, value: &T) {
        let value = serde_json::to_value(value).unwrap_or(Value::Null);
        let text = match self.format {
            Format::Json => serde_json::to_string_pretty(&value).unwrap_or_default() + "\n",
            Format::Yaml => serde_norway::to_string(&value).unwrap_or_default(),
            Format::Table => match &value {
                Value::Object(_) => price_table(&value).unwrap_or_else(|| table(std::slice::from_ref(&value), true)),
                Value::Array(items) => table(items, false),
                Value::Null => String::new(),
                other => format!("{other}\n"),
            },
        };
        let _ = std::io::stdout().write_all(text.as_bytes());
    }

    fn finish_list(&self) {
        let rows = std::mem::take(&mut *self.rows.borrow_mut());
        match self.format {
            Format::Table => {
                let _ = std::io::stdout().write_all(table(&rows, false).as_bytes());
            }
            _ => self.print(&Value::Array(rows)),
        }
    }
}

/// The id of an Operation answer (what `--wait` follows).
pub fn operation_id(answer: &Value) -> Option<String> {
    let id = answer.get("id")?.as_str()?;
    (id.starts_with("op_") && answer.get("status").is_some()).then(|| id.to_string())
}

/// Commands that change something and have a dry run, which take `--dry-run`.
pub fn is_mutation(command: crate::generated_cli::CliCommand) -> bool {
    moke_sdk::DRY_RUN_OPERATIONS.contains(&command.operation_id())
}

/// Commands whose answer may be an Operation, which take `--wait`.
pub fn answers_operation(command: crate::generated_cli::CliCommand) -> bool {
    let id = command.operation_id();
    ["_create", "_update", "_delete", "_scale", "_pause", "_resume", "_restart", "_rollback", "_revoke"]
        .iter()
        .any(|suffix| id.ends_with(suffix))
        && ["cluster", "node_pool", "deployment", "service", "namespace"].iter().any(|r| id.starts_with(r))
}

/// The problem of a failed call, for people: its detail, each bad field,
/// and the request id to quote.
pub fn describe_error<T: Serialize + std::fmt::Debug>(error: &Error<T>) -> String {
    match error {
        Error::ErrorResponse(answer) => {
            let problem = serde_json::to_value(answer.as_ref()).unwrap_or(Value::Null);
            let mut text = format!(
                "error: {} ({})",
                problem["detail"].as_str().unwrap_or("the request was refused"),
                answer.status().as_u16()
            );
            for field in problem["errors"].as_array().into_iter().flatten() {
                text += &format!(
                    "\n  {}: {}",
                    field["field"].as_str().unwrap_or("?"),
                    field["message"].as_str().unwrap_or_default()
                );
            }
            if let Some(id) = problem["request_id"].as_str() {
                text += &format!("\n  request id: {id}");
            }
            text
        }
        other => format!("error: {other}"),
    }
}

impl crate::generated_cli::CliConfig for Printer {
    fn success_item<T>(&self, value: &ResponseValue<T>)
    where
        T: schemars::JsonSchema + Serialize + std::fmt::Debug,
    {
        let answer = serde_json::to_value(value.as_ref()).ok();
        let is_operation = answer.as_ref().and_then(operation_id).is_some();
        if !(self.hold_answer && is_operation) {
            self.print(value.as_ref());
        }
        *self.answer.borrow_mut() = answer;
    }

    fn execute_cluster_create(
        &self,
        matches: &clap::ArgMatches,
        request: &mut moke_sdk::builder::ClusterCreate,
    ) -> anyhow::Result<()> {
        if let Some(spec) = cluster_spec_from_flags(matches)? {
            let spec: moke_sdk::types::ClusterSpecInput = serde_json::from_value(spec)?;
            *request = request.clone().body_map(|body| body.spec(spec));
        }
        Ok(())
    }

    fn execute_node_pool_create(
        &self,
        matches: &clap::ArgMatches,
        request: &mut moke_sdk::builder::NodePoolCreate,
    ) -> anyhow::Result<()> {
        if let Some(spec) = node_pool_spec_from_flags(matches) {
            let spec: moke_sdk::types::NodePoolSpecInput = serde_json::from_value(spec)?;
            *request = request.clone().body_map(|body| body.spec(spec));
        }
        Ok(())
    }

    fn success_no_item(&self, _: &ResponseValue<()>) {}

    fn error<T>(&self, value: &Error<T>)
    where
        T: schemars::JsonSchema + Serialize + std::fmt::Debug,
    {
        if !self.plan.as_ref().is_some_and(moke_sdk::PlanSlot::holds_plan) {
            eprintln!("{}", describe_error(value));
        }
    }

    fn list_start<T>(&self)
    where
        T: schemars::JsonSchema + Serialize + std::fmt::Debug,
    {
        self.rows.borrow_mut().clear();
    }

    fn list_item<T>(&self, value: &T)
    where
        T: schemars::JsonSchema + Serialize + std::fmt::Debug,
    {
        self.rows.borrow_mut().push(serde_json::to_value(value).unwrap_or(Value::Null));
    }

    fn list_end_success<T>(&self)
    where
        T: schemars::JsonSchema + Serialize + std::fmt::Debug,
    {
        self.finish_list();
    }

    fn list_end_error<T>(&self, value: &Error<T>)
    where
        T: schemars::JsonSchema + Serialize + std::fmt::Debug,
    {
        self.finish_list();
        eprintln!("{}", describe_error(value));
    }
}

/// `moke cluster create`'s spec flags as a `ClusterSpecInput`, when
/// `--region` is given (otherwise the spec is the `--json-body` file's).
pub fn cluster_spec_from_flags(matches: &clap::ArgMatches) -> anyhow::Result<Option<Value>> {
    let Some(region) = matches.get_one::<String>("region") else { return Ok(None) };
    let mut spec = serde_json::json!({ "region": region });
    if let Some(version) = matches.get_one::<String>("kubernetes-version") {
        spec["kubernetes_version"] = version.clone().into();
    }
    if let Some(replicas) = matches.get_one::<String>("control-plane-replicas") {
        spec["control_plane"] = serde_json::json!({ "replicas": replicas.parse::<i64>()? });
    }
    if matches.get_flag("deletion-protection") {
        spec["deletion_protection"] = true.into();
    }
    Ok(Some(spec))
}

/// `moke node-pool create`'s `--machine-type` and `--count` as a
/// `NodePoolSpecInput`, when both are given.
pub fn node_pool_spec_from_flags(matches: &clap::ArgMatches) -> Option<Value> {
    let machine_type = matches.get_one::<String>("machine-type")?;
    let count = matches.get_one::<i64>("count")?;
    Some(serde_json::json!({ "machine_type": machine_type, "count": count }))
}

/// A price estimate (`lines` and `monthly_total`) as a table of its lines
/// and the total; a price change as the two estimates and the difference.
fn price_table(value: &Value) -> Option<String> {
    let estimate = |e: &Value| -> Option<String> {
        let lines = e.get("lines")?.as_array()?;
        let total = e.get("monthly_total")?.as_str()?;
        let currency = e.get("currency").and_then(Value::as_str).unwrap_or_default();
        let lines: Vec<Value> = lines
            .iter()
            .map(|l| {
                serde_json::json!({ "product": l["product"], "count": l["count"], "hours": l["hours"],
                                    "unit_price": l["unit_price"], "amount": l["amount"] })
            })
            .collect();
        Some(format!("{}MONTHLY TOTAL  {currency} {total}\n", table(&lines, false)))
    };
    match (value.get("current"), value.get("proposed"), value.get("monthly_delta").and_then(Value::as_str)) {
        (Some(current), Some(proposed), Some(delta)) => {
            let currency = proposed.get("currency").and_then(Value::as_str).unwrap_or_default();
            Some(format!(
                "NOW\n{}\nWITH THE CHANGE\n{}\nMONTHLY DIFFERENCE  {currency} {delta}\n",
                estimate(current)?,
                estimate(proposed)?
            ))
        }
        _ => estimate(value),
    }
}

/// A plain-text table: a header of upper-cased field names, then one row
/// per item. A single object with no list is shown as `FIELD  value` lines.
pub fn table(items: &[Value], single: bool) -> String {
    if single && let Some(Value::Object(fields)) = items.first() {
        let width = fields.keys().map(String::len).max().unwrap_or(0);
        return fields.iter().map(|(key, value)| format!("{key:<width$}  {}\n", cell(value))).collect();
    }
    let Some(Value::Object(first)) = items.first() else {
        return String::new();
    };
    let scalar = |key: &str| first.get(key).is_some_and(|v| !v.is_object() && !v.is_array());
    let mut columns: Vec<String> = PREFERRED.iter().filter(|k| scalar(k)).map(|k| k.to_string()).collect();
    for key in first.keys() {
        if columns.len() >= MAX_COLUMNS {
            break;
        }
        if scalar(key) && !columns.contains(key) && !key.ends_with("_at") && key != "etag" {
            columns.push(key.clone());
        }
    }
    // A nested status phase is what people look for first.
    if columns.len() < MAX_COLUMNS
        && !columns.contains(&"status".to_string())
        && first.get("status").is_some_and(Value::is_object)
    {
        columns.insert(columns.len().min(2), "status".into());
    }
    let rows: Vec<Vec<String>> = items
        .iter()
        .map(|item| columns.iter().map(|c| item.get(c.as_str()).map(cell).unwrap_or_default()).collect())
        .collect();
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| rows.iter().map(|r| r[i].chars().count()).chain([c.len()]).max().unwrap_or(0))
        .collect();
    let line = |cells: Vec<String>| {
        let mut text: String =
            cells.iter().zip(&widths).map(|(cell, width)| format!("{cell:<width$}  ")).collect::<String>();
        text.truncate(text.trim_end().len());
        text + "\n"
    };
    let mut out = line(columns.iter().map(|c| c.to_uppercase()).collect());
    for row in rows {
        out += &line(row);
    }
    out
}

/// A value as one table cell: strings bare, a status object by its phase.
fn cell(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Object(o) => match o.get("phase").or_else(|| o.get("state")) {
            Some(Value::String(phase)) => phase.clone(),
            _ => serde_json::to_string(value).unwrap_or_default(),
        },
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_list_becomes_aligned_columns() {
        let items = [
            json!({ "id": "prj_1", "name": "web", "etag": "\"x\"", "created_at": "t", "labels": {} }),
            json!({ "id": "prj_22", "name": "shop", "etag": "\"y\"", "created_at": "t", "labels": {} }),
        ];
        assert_eq!(table(&items, false), "ID      NAME  CREATED_AT\nprj_1   web   t\nprj_22  shop  t\n");
    }

    #[test]
    fn a_status_object_shows_its_phase() {
        let items = [json!({ "id": "cl_1", "name": "prod", "status": { "phase": "running", "nodes": 3 } })];
        assert_eq!(table(&items, false), "ID    NAME  STATUS\ncl_1  prod  running\n");
    }
}
