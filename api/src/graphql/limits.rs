//! Limits that depth and complexity do not give. One operation holds at
//! most [`MAX_ROOT_FIELDS`] root fields: aliases would otherwise repeat an
//! expensive field thousands of times in one request that the rate limit
//! counts once. And a WebSocket carries only subscriptions: queries and
//! mutations belong on HTTP, where every request is counted.

use std::collections::HashSet;
use std::sync::Arc;

use async_graphql::extensions::{Extension, ExtensionContext, ExtensionFactory, NextParseQuery};
use async_graphql::parser::types::{ExecutableDocument, OperationType, Selection, SelectionSet};
use async_graphql::{ServerResult, Variables};

use super::{WsSession, error};
use crate::app::Error;

/// The most root fields (aliases and fragments included) of one operation.
pub const MAX_ROOT_FIELDS: usize = 20;

/// The extension enforcing both limits, before anything is resolved.
pub struct Limits;

impl ExtensionFactory for Limits {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(Limits)
    }
}

#[async_trait::async_trait]
impl Extension for Limits {
    async fn parse_query(
        &self,
        ctx: &ExtensionContext<'_>,
        query: &str,
        variables: &Variables,
        next: NextParseQuery<'_>,
    ) -> ServerResult<ExecutableDocument> {
        let document = next.run(ctx, query, variables).await?;
        let over_socket = ctx.data_opt::<WsSession>().is_some();
        for (_, operation) in document.operations.iter() {
            if over_socket && operation.node.ty != OperationType::Subscription {
                return Err(refused("only subscriptions run over the WebSocket; send queries and mutations over HTTP"));
            }
            let mut seen = HashSet::new();
            if root_fields(&document, &operation.node.selection_set.node, &mut seen) > MAX_ROOT_FIELDS {
                let why = format!("an operation selects at most {MAX_ROOT_FIELDS} root fields (aliases included)");
                return Err(refused(&why));
            }
        }
        Ok(document)
    }
}

fn refused(why: &str) -> async_graphql::ServerError {
    error(Error::invalid_field("query", "too_many_fields", why)).into_server_error(Default::default())
}

/// The fields a selection set selects at its own level, through fragments
/// (each fragment counted once, so a cycle cannot loop).
fn root_fields<'a>(document: &'a ExecutableDocument, set: &'a SelectionSet, seen: &mut HashSet<&'a str>) -> usize {
    set.items
        .iter()
        .map(|item| match &item.node {
            Selection::Field(_) => 1,
            Selection::InlineFragment(fragment) => root_fields(document, &fragment.node.selection_set.node, seen),
            Selection::FragmentSpread(spread) => {
                let name = spread.node.fragment_name.node.as_str();
                match document.fragments.get(name) {
                    Some(fragment) if seen.insert(name) => {
                        root_fields(document, &fragment.node.selection_set.node, seen)
                    }
                    _ => 0,
                }
            }
        })
        .sum()
}
