//! Authorization that cannot be forgotten. A row of a resource customers
//! name (a project, a cluster) leaves its module only through a lookup that
//! takes the action the caller means to perform, and comes back as
//! [`Authorized`], which only [`Authorized::check`] makes, after
//! [`moke_iam::authorize`] allowed that action.

use std::ops::Deref;

use moke_iam::{Action, Target};

use super::{RequestContext, Result};

/// A row the caller may perform the action it was looked up for on.
#[derive(Debug)]
pub struct Authorized<T>(T);

impl<T> Authorized<T> {
    /// `row`, if `ctx` may do `action` on `target` (where the row lives).
    pub fn check(ctx: &RequestContext, action: Action, target: Target, row: T) -> Result<Authorized<T>> {
        moke_iam::authorize(&ctx.principal, action, target)?;
        Ok(Authorized(row))
    }

    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> Deref for Authorized<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

/// Whether a lookup locks the row it finds until the transaction ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lock {
    None,
    /// `FOR UPDATE`: concurrent changes to the row wait for this one.
    ForUpdate,
}
