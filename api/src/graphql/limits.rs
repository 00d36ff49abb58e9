//! Limits that depth and complexity do not give. One operation holds at
//! most [`MAX_ROOT_FIELDS`] root fields: aliases or repeated fragments would
//! otherwise repeat an expensive field thousands of times in one request
//! that the rate limit counts once. A document spreads fragments at most
//! [`MAX_SPREADS`] times, checked on its text before it is parsed, so no
//! nesting of fragments can make parsing or validation walk an exponential
//! tree. And a WebSocket carries only subscriptions: queries and mutations
//! belong on HTTP, where every request is counted.

use std::collections::HashMap;
use std::sync::Arc;

use async_graphql::extensions::{Extension, ExtensionContext, ExtensionFactory, NextParseQuery, NextPrepareRequest};
use async_graphql::parser::types::{ExecutableDocument, OperationType, Selection, SelectionSet};
use async_graphql::{Request, ServerResult, Variables};

use super::{WsSession, error};
use crate::app::Error;

/// The most root fields (aliases and fragments included) of one operation.
pub const MAX_ROOT_FIELDS: usize = 20;
/// The most fragment spreads (`...`) in one document.
pub const MAX_SPREADS: usize = 50;

/// The extension enforcing both limits, before anything is resolved.
pub struct Limits;

impl ExtensionFactory for Limits {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(Limits)
    }
}

#[async_trait::async_trait]
impl Extension for Limits {
    async fn prepare_request(
        &self,
        ctx: &ExtensionContext<'_>,
        request: Request,
        next: NextPrepareRequest<'_>,
    ) -> ServerResult<Request> {
        if request.query.matches("...").count() > MAX_SPREADS {
            let why = format!("a document spreads fragments at most {MAX_SPREADS} times");
            return Err(refused(&why));
        }
        next.run(ctx, request).await
    }

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
            let mut counted = HashMap::new();
            let mut path = Vec::new();
            if root_fields(&document, &operation.node.selection_set.node, &mut counted, &mut path) > MAX_ROOT_FIELDS {
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

/// The fields a selection set selects at its own level, through fragments:
/// every spread counts (the executor runs each one), each fragment's count
/// worked out once (`counted`), and a fragment spread inside itself (`path`,
/// which validation refuses later) counts nothing.
fn root_fields<'a>(
    document: &'a ExecutableDocument,
    set: &'a SelectionSet,
    counted: &mut HashMap<&'a str, usize>,
    path: &mut Vec<&'a str>,
) -> usize {
    let mut total = 0usize;
    for item in &set.items {
        let count = match &item.node {
            Selection::Field(_) => 1,
            Selection::InlineFragment(fragment) => {
                root_fields(document, &fragment.node.selection_set.node, counted, path)
            }
            Selection::FragmentSpread(spread) => {
                let name = spread.node.fragment_name.node.as_str();
                match (counted.get(name), document.fragments.get(name)) {
                    (Some(count), _) => *count,
                    (None, Some(fragment)) if !path.contains(&name) => {
                        path.push(name);
                        let count = root_fields(document, &fragment.node.selection_set.node, counted, path);
                        path.pop();
                        counted.insert(name, count);
                        count
                    }
                    _ => 0,
                }
            }
        };
        total = total.saturating_add(count);
    }
    total
}
