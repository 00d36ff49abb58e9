//! The API as the console uses it: the SDK's client, made by
//! [`crate::session::RequestSession`] with the person's credential and the
//! browser's address.

/// An SDK client for one request of one person.
pub(crate) struct Api(moke_sdk::Client);

impl Api {
    pub(crate) fn new(client: moke_sdk::Client) -> Api {
        Api(client)
    }
}

impl std::ops::Deref for Api {
    type Target = moke_sdk::Client;

    fn deref(&self) -> &moke_sdk::Client {
        &self.0
    }
}
