//! Limits that depth and complexity do not give. One operation holds at
//! most [`MAX_ROOT_FIELDS`] root fields: aliases or repeated fragments would
//! otherwise repeat an expensive field thousands of times in one request
//! that the rate limit counts once. A document spreads fragments at most
//! [`MAX_SPREADS`] times, checked on its text before it is parsed. An
//! operation with its fragments written out selects at most
//! [`MAX_EXPANDED_FIELDS`] fields, worked out once per fragment before
//! validation: validation (depth, complexity) walks every use of a fragment
//! again, synchronously, so fragments that each spread the next a few times
//! would otherwise make it walk an exponential tree, whoever sent it. And a
//! WebSocket carries only subscriptions: queries and mutations belong on
//! HTTP, where every request is counted.
//!
//! HTTP requests are parsed and checked here before the schema sees them,
//! and the documents signed-in callers send most are kept parsed
//! ([`Documents`]): a dashboard or an SDK sends the same few documents over
//! and over, and parsing was a sixth of a read's CPU. Subscriptions over the
//! WebSocket are checked by the [`OverSocket`] extension.

use std::collections::HashMap;
use std::sync::Arc;

use async_graphql::extensions::{Extension, ExtensionContext, ExtensionFactory, NextParseQuery, NextPrepareRequest};
use async_graphql::parser::types::{ExecutableDocument, OperationType, Selection, SelectionSet};
use async_graphql::{Request, ServerResult, Variables};

use super::error;
use crate::app::Error;

/// The most root fields (aliases and fragments included) of one operation.
pub const MAX_ROOT_FIELDS: usize = 20;
/// The most fragment spreads (`...`) in one document.
pub const MAX_SPREADS: usize = 50;
/// The most fields one operation selects at all depths once its fragments
/// are written out (the complexity limit, 10 000, prices far fewer).
pub const MAX_EXPANDED_FIELDS: usize = 5_000;

/// The most parsed documents kept.
pub const CACHED_DOCUMENTS: usize = 256;
/// The longest document kept parsed (longer ones are parsed every time).
pub const MAX_CACHED_DOCUMENT_BYTES: usize = 4 * 1024;
/// The most selections (fields, spreads, inline fragments, in operations
/// and fragments alike) of a document kept parsed, which bounds what each
/// kept document holds in memory.
pub const MAX_CACHED_SELECTIONS: usize = 500;

/// Parsed documents that passed the limits, keyed by their exact text; at
/// most [`CACHED_DOCUMENTS`], each at most [`MAX_CACHED_DOCUMENT_BYTES`] and
/// [`MAX_CACHED_SELECTIONS`], and only what signed-in callers sent, so
/// nobody fills it without a credential. When full, an arbitrary one makes
/// room: a caller who sends many different documents only makes them all
/// parse again. A document is copied out after the lock is let go.
#[derive(Default)]
pub struct Documents {
    kept: std::sync::Mutex<HashMap<String, Arc<ExecutableDocument>>>,
}

impl Documents {
    /// The parsed document of an HTTP request, within every limit: kept
    /// from an earlier request of a signed-in caller, or parsed, checked,
    /// and kept when `signed_in`.
    pub fn prepare(&self, text: &str, signed_in: bool) -> ServerResult<ExecutableDocument> {
        if signed_in && let Some(document) = self.get(text) {
            return Ok(document);
        }
        spreads_within_limit(text)?;
        let document = async_graphql::parser::parse_query(text)?;
        check(&document, false)?;
        if signed_in {
            self.keep(text, &document);
        }
        Ok(document)
    }

    fn get(&self, text: &str) -> Option<ExecutableDocument> {
        let kept = self.kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(text).cloned();
        kept.map(|document| (*document).clone())
    }

    fn keep(&self, text: &str, document: &ExecutableDocument) {
        if text.len() > MAX_CACHED_DOCUMENT_BYTES || selections(document) > MAX_CACHED_SELECTIONS {
            return;
        }
        let document = Arc::new(document.clone());
        let mut kept = self.kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if kept.len() >= CACHED_DOCUMENTS
            && let Some(any) = kept.keys().next().cloned()
        {
            kept.remove(&any);
        }
        kept.insert(text.to_string(), document);
    }
}

/// Every selection a document writes (not expanded): its size in memory.
fn selections(document: &ExecutableDocument) -> usize {
    fn of(set: &SelectionSet) -> usize {
        set.items.iter().fold(0usize, |total, item| {
            let nested = match &item.node {
                Selection::Field(field) => of(&field.node.selection_set.node),
                Selection::InlineFragment(fragment) => of(&fragment.node.selection_set.node),
                Selection::FragmentSpread(_) => 0,
            };
            total.saturating_add(1).saturating_add(nested)
        })
    }
    let operations = document.operations.iter().map(|(_, operation)| of(&operation.node.selection_set.node));
    let fragments = document.fragments.values().map(|fragment| of(&fragment.node.selection_set.node));
    operations.chain(fragments).fold(0usize, usize::saturating_add)
}

/// The spread limit, checked on the text before it is parsed.
fn spreads_within_limit(text: &str) -> ServerResult<()> {
    if text.matches("...").count() > MAX_SPREADS {
        let why = format!("a document spreads fragments at most {MAX_SPREADS} times");
        return Err(refused(&why));
    }
    Ok(())
}

/// The limits of a parsed document's operations; over a WebSocket, only
/// subscriptions are allowed.
fn check(document: &ExecutableDocument, over_socket: bool) -> ServerResult<()> {
    for (_, operation) in document.operations.iter() {
        if over_socket && operation.node.ty != OperationType::Subscription {
            return Err(refused("only subscriptions run over the WebSocket; send queries and mutations over HTTP"));
        }
        let set = &operation.node.selection_set.node;
        let too_deep =
            || refused(&format!("an operation nests at most {MAX_NESTING} levels with its fragments written out"));
        let roots = root_fields(document, set, &mut HashMap::new(), &mut Vec::new(), 0).ok_or_else(too_deep)?;
        if roots > MAX_ROOT_FIELDS {
            let why = format!("an operation selects at most {MAX_ROOT_FIELDS} root fields (aliases included)");
            return Err(refused(&why));
        }
        let expanded = expanded_fields(document, set, &mut HashMap::new(), &mut Vec::new(), 0).ok_or_else(too_deep)?;
        if expanded > MAX_EXPANDED_FIELDS {
            let why =
                format!("an operation selects at most {MAX_EXPANDED_FIELDS} fields with its fragments written out");
            return Err(refused(&why));
        }
    }
    Ok(())
}

/// The limits as a schema extension, for the WebSocket: HTTP requests are
/// prepared with [`Documents::prepare`] before they reach the schema, which
/// then runs without extensions (an extension costs something on every
/// field it resolves).
pub struct OverSocket;

impl ExtensionFactory for OverSocket {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(OverSocket)
    }
}

#[async_trait::async_trait]
impl Extension for OverSocket {
    async fn prepare_request(
        &self,
        ctx: &ExtensionContext<'_>,
        request: Request,
        next: NextPrepareRequest<'_>,
    ) -> ServerResult<Request> {
        spreads_within_limit(&request.query)?;
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
        check(&document, true)?;
        Ok(document)
    }
}

fn refused(why: &str) -> async_graphql::ServerError {
    error(Error::invalid_field("query", "too_many_fields", why)).into_server_error(Default::default())
}

/// The deepest an operation nests, fragments written out (async-graphql's
/// own check counts each fragment alone); the walks below give up past it,
/// so a chain of fragments cannot make them recurse without bound.
pub const MAX_NESTING: usize = 64;

/// The fields a selection set selects at its own level, through fragments:
/// every spread counts (the executor runs each one), each fragment's count
/// worked out once (`counted`), and a fragment spread inside itself (`path`,
/// which validation refuses later) counts nothing. None past
/// [`MAX_NESTING`].
fn root_fields<'a>(
    document: &'a ExecutableDocument,
    set: &'a SelectionSet,
    counted: &mut HashMap<&'a str, usize>,
    path: &mut Vec<&'a str>,
    depth: usize,
) -> Option<usize> {
    if depth > MAX_NESTING {
        return None;
    }
    let mut total = 0usize;
    for item in &set.items {
        let count = match &item.node {
            Selection::Field(_) => 1,
            Selection::InlineFragment(fragment) => {
                root_fields(document, &fragment.node.selection_set.node, counted, path, depth + 1)?
            }
            Selection::FragmentSpread(spread) => {
                let name = spread.node.fragment_name.node.as_str();
                match (counted.get(name), document.fragments.get(name)) {
                    (Some(count), _) => *count,
                    (None, Some(fragment)) if !path.contains(&name) => {
                        path.push(name);
                        let count = root_fields(document, &fragment.node.selection_set.node, counted, path, depth + 1);
                        path.pop();
                        let count = count?;
                        counted.insert(name, count);
                        count
                    }
                    _ => 0,
                }
            }
        };
        total = total.saturating_add(count);
    }
    Some(total)
}

/// The fields a selection set selects at every depth with its fragments
/// written out: what validation and execution walk. Each fragment's size is
/// worked out once (`sized`), so this is linear in the document whatever
/// the nesting; a fragment spread inside itself (`path`) counts nothing.
/// None past [`MAX_NESTING`].
fn expanded_fields<'a>(
    document: &'a ExecutableDocument,
    set: &'a SelectionSet,
    sized: &mut HashMap<&'a str, usize>,
    path: &mut Vec<&'a str>,
    depth: usize,
) -> Option<usize> {
    if depth > MAX_NESTING {
        return None;
    }
    let mut total = 0usize;
    for item in &set.items {
        let size = match &item.node {
            Selection::Field(field) => 1usize.saturating_add(expanded_fields(
                document,
                &field.node.selection_set.node,
                sized,
                path,
                depth + 1,
            )?),
            Selection::InlineFragment(fragment) => {
                expanded_fields(document, &fragment.node.selection_set.node, sized, path, depth + 1)?
            }
            Selection::FragmentSpread(spread) => {
                let name = spread.node.fragment_name.node.as_str();
                match (sized.get(name), document.fragments.get(name)) {
                    (Some(size), _) => *size,
                    (None, Some(fragment)) if !path.contains(&name) => {
                        path.push(name);
                        let size = expanded_fields(document, &fragment.node.selection_set.node, sized, path, depth + 1);
                        path.pop();
                        let size = size?;
                        sized.insert(name, size);
                        size
                    }
                    _ => 0,
                }
            }
        };
        total = total.saturating_add(size);
    }
    Some(total)
}
