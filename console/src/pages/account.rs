//! Signing up, confirming the address, signing in and out, resetting a
//! password, approving a `moke auth login` device, switching organization.

use leptos::prelude::*;
use leptos_meta::Title;
use moke_sdk::types;

use super::query;
use crate::error::{ConsoleError, FieldProblem};
use crate::session::request_session;
use crate::ui::{Choice, Csrf, Field, FormAlert, FormErrors, NAME_PATTERN, action_error};

/// Form values checked against the SDK's types (the API's own rules)
/// before a call, so that every bad field is named at once.
#[derive(Default)]
pub(crate) struct Fields(Vec<FieldProblem>);

impl Fields {
    /// `value` as `T`, or a problem for `name` saying `message`.
    pub(crate) fn parse<T: std::str::FromStr>(&mut self, name: &str, value: &str, message: &str) -> Option<T> {
        match value.trim().parse() {
            Ok(parsed) => Some(parsed),
            Err(_) => {
                self.0.push(FieldProblem { field: name.into(), message: message.into() });
                None
            }
        }
    }

    /// Adds a problem the form itself found.
    pub(crate) fn problem(&mut self, name: &str, message: &str) {
        self.0.push(FieldProblem { field: name.into(), message: message.into() });
    }

    /// Refuses a destructive form whose confirmation box was not ticked.
    pub(crate) fn ticked(confirm: &Option<String>, message: &str) -> Result<(), ConsoleError> {
        let mut fields = Fields::default();
        if confirm.is_none() {
            fields.problem("confirm", message);
        }
        fields.finish()
    }

    /// Refuses a deletion unless the name was typed exactly.
    pub(crate) fn typed(confirm: &str, name: &str, message: &str) -> Result<(), ConsoleError> {
        let mut fields = Fields::default();
        if confirm.trim() != name {
            fields.problem("confirm", message);
        }
        fields.finish()
    }

    /// Every problem at once, or nothing.
    pub(crate) fn finish(self) -> Result<(), ConsoleError> {
        if self.0.is_empty() { Ok(()) } else { Err(ConsoleError::invalid(self.0)) }
    }
}

/// Where to go after signing in: a path on this site only. Plain path
/// characters only, so that nothing a browser strips or rewrites (tabs,
/// newlines, backslashes) can turn it into `//elsewhere`.
fn safe_next(next: Option<String>) -> String {
    let plain = |next: &str| {
        next.starts_with('/')
            && !next.starts_with("//")
            && next.bytes().all(|b| b.is_ascii_alphanumeric() || b"/_-.?=&%".contains(&b))
    };
    let acts = |next: &str| {
        let (path, query) = next.split_once('?').unwrap_or((next, ""));
        crate::session::acts_with_session(path, query)
    };
    next.filter(|next| plain(next) && !acts(next)).unwrap_or_else(|| "/projects".into())
}

const EMAIL: &str = "Enter an e-mail address, like you@example.com.";

#[server(prefix = "/console/fn", endpoint = "sign_in")]
pub async fn sign_in(csrf: String, email: String, password: String, next: Option<String>) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let kept = [("email", email.as_str())];
    let signed_in = async {
        let mut fields = Fields::default();
        let checked = fields.parse::<types::LoginRequestEmail>("email", &email, EMAIL);
        if password.is_empty() {
            fields.problem("password", "Enter your password.");
        }
        fields.finish()?;
        let body = types::LoginRequest {
            email: checked.expect("finish() refused a missing field"),
            organization: None,
            password: types::LoginRequestPassword::try_from(password).map_err(|_| ConsoleError::invalid(Vec::new()))?,
        };
        let tokens = session.anonymous_api().session_create().body(body).send().await?.into_inner();
        session.sign_in(tokens);
        session.redirect(&safe_next(next));
        Ok(())
    };
    signed_in.await.map_err(|e: ConsoleError| e.keep(&kept))
}

/// `/signin`.
#[component]
pub fn SignIn() -> impl IntoView {
    let action = ServerAction::<SignIn>::new();
    let errors = FormErrors::new(action_error(action.value().get_untracked()), &["email", "password"]);
    let next = query("next");
    let session = request_session();
    if session.signed_in() && errors.is_empty() {
        session.redirect(&safe_next(next.clone()));
    }
    view! {
        <Title text="Sign in"/>
        <main class="narrow" id="main">
            <h1>"Sign in to Moke"</h1>
            <FormAlert errors=errors.clone()/>
            <ActionForm action=action>
                <Csrf/>
                <input type="hidden" name="next" value=next/>
                <Field label="E-mail" name="email" kind="email" autocomplete="username" required=true errors=errors.clone()/>
                <Field label="Password" name="password" kind="password" autocomplete="current-password" required=true errors=errors.clone()/>
                <button type="submit">"Sign in"</button>
            </ActionForm>
            <p><a href="/signin/sso">"Sign in with single sign-on"</a></p>
            <p><a href="/reset-password">"Forgot your password?"</a></p>
            <p>"New to Moke? " <a href="/signup">"Create an account"</a></p>
        </main>
    }
}

#[server(prefix = "/console/fn", endpoint = "sign_up")]
pub async fn sign_up(
    csrf: String,
    email: String,
    password: String,
    display_name: String,
    organization_name: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let kept = [
        ("email", email.as_str()),
        ("display_name", display_name.as_str()),
        ("organization_name", organization_name.as_str()),
    ];
    sign_up_with(&session, &email, &display_name, &organization_name, password).await.map_err(|e| e.keep(&kept))
}

async fn sign_up_with(
    session: &crate::session::RequestSession,
    email: &str,
    display_name: &str,
    organization_name: &str,
    password: String,
) -> Result<(), ConsoleError> {
    let mut fields = Fields::default();
    let email_checked = fields.parse::<types::SignupRequestEmail>("email", email, EMAIL);
    let name = fields.parse::<types::SignupRequestDisplayName>(
        "display_name",
        display_name,
        "Enter your name (1-100 characters).",
    );
    let organization = fields.parse::<types::SignupRequestOrganizationName>(
        "organization_name",
        organization_name,
        "Use 1-63 lowercase letters, digits or '-', starting with a letter and not ending with '-'.",
    );
    let password_checked = types::SignupRequestPassword::try_from(password).ok();
    if password_checked.is_none() {
        fields.problem("password", "Use 12 characters or more.");
    }
    fields.finish()?;
    let body = types::SignupRequest {
        email: email_checked.expect("finish() refused a missing field"),
        display_name: name.expect("finish() refused a missing field"),
        organization_name: organization.expect("finish() refused a missing field"),
        password: password_checked.expect("finish() refused a missing field"),
    };
    session.anonymous_api().account_create().body(body).send().await?;
    // The address goes to the next page in the sealed cookie, not the URL:
    // no link can make the page say a mail went anywhere.
    session.show_once(crate::session::Flash {
        id: String::new(),
        issued: 0,
        for_path: "/signup".into(),
        what: "sign-up".into(),
        secret: email.trim().to_string(),
        url: None,
    });
    session.redirect("/signup?sent=1");
    Ok(())
}

/// `/signup`, and after it the "check your mail" page.
#[component]
pub fn SignUp() -> impl IntoView {
    let action = ServerAction::<SignUp>::new();
    let fields = ["email", "display_name", "organization_name", "password"];
    let errors = FormErrors::new(action_error(action.value().get_untracked()), &fields);
    let sent = query("sent").and_then(|_| request_session().take_flash()).map(|flash| flash.secret);
    if let Some(sent) = sent {
        return view! {
            <Title text="Check your mail"/>
            <main class="narrow" id="main">
                <h1>"Check your mail"</h1>
                <p role="status">"We sent a link to " <strong>{sent}</strong> ". Open it to finish creating your account; it is valid for a day."</p>
                <p>"No mail? Look in your spam folder, or " <a href="/signup">"sign up again"</a> "."</p>
            </main>
        }
        .into_any();
    }
    view! {
        <Title text="Create your account"/>
        <main class="narrow" id="main">
            <h1>"Create your Moke account"</h1>
            <FormAlert errors=errors.clone()/>
            <ActionForm action=action>
                <Csrf/>
                <Field label="E-mail" name="email" kind="email" autocomplete="email" required=true errors=errors.clone()/>
                <Field label="Your name" name="display_name" autocomplete="name" required=true errors=errors.clone()/>
                <Field
                    label="Organization name"
                    name="organization_name"
                    hint="Lowercase letters, digits and '-', e.g. acme. Your projects and clusters live in it."
                    pattern=NAME_PATTERN
                    required=true
                    errors=errors.clone()
                />
                <Field
                    label="Password"
                    name="password"
                    kind="password"
                    autocomplete="new-password"
                    hint="At least 12 characters; a phrase of a few words is good."
                    required=true
                    errors=errors.clone()
                />
                <button type="submit">"Create account"</button>
            </ActionForm>
            <p>"Have an account? " <a href="/signin">"Sign in"</a></p>
        </main>
    }
    .into_any()
}

#[server(prefix = "/console/fn", endpoint = "sign_up_confirm")]
pub async fn sign_up_confirm(
    csrf: String,
    token: String,
    password: String,
    organization_name: Option<String>,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let mut fields = Fields::default();
    let organization = match organization_name.as_deref().map(str::trim).filter(|name| !name.is_empty()) {
        Some(name) => fields.parse::<types::SignupConfirmOrganizationName>(
            "organization_name",
            name,
            "Use 1-63 lowercase letters, digits or '-', starting with a letter.",
        ),
        None => None,
    };
    if password.is_empty() {
        fields.problem("password", "Enter the password you chose when signing up.");
    }
    fields.finish()?;
    let body = types::SignupConfirm { token, password, organization_name: organization };
    let made = session.anonymous_api().account_confirm().body(body).send().await?.into_inner();
    session.sign_in(made.session);
    session.redirect("/projects?welcome=1");
    Ok(())
}

/// `/signup/confirm?token=…`: the link in the sign-up mail. The account is
/// made only when the person confirms with the password (a mail scanner
/// following the link changes nothing).
#[component]
pub fn SignUpConfirm() -> impl IntoView {
    let action = ServerAction::<SignUpConfirm>::new();
    let errors = FormErrors::new(action_error(action.value().get_untracked()), &["password", "organization_name"]);
    let token = query("token").unwrap_or_default();
    let taken = errors.has_field("organization_name");
    view! {
        <Title text="Finish signing up"/>
        <main class="narrow" id="main">
            <h1>"Finish creating your account"</h1>
            <FormAlert errors=errors.clone()/>
            {if token.is_empty() {
                view! { <p role="alert">"This link is incomplete. Open the link from the mail again, or " <a href="/signup">"sign up again"</a> "."</p> }.into_any()
            } else {
                view! {
                    <ActionForm action=action>
                        <Csrf/>
                        <input type="hidden" name="token" value=token/>
                        <Field label="Password" name="password" kind="password" autocomplete="current-password" hint="The password you chose when signing up." required=true errors=errors.clone()/>
                        {taken.then(|| view! {
                            <Field label="Another organization name" name="organization_name" hint="The name you asked for was taken meanwhile." errors=errors.clone()/>
                        })}
                        <button type="submit">"Create my account"</button>
                    </ActionForm>
                }.into_any()
            }}
        </main>
    }
}

#[server(prefix = "/console/fn", endpoint = "email_verify")]
pub async fn email_verify(csrf: String, token: String) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    session.anonymous_api().email_verify().body(types::LinkToken { token }).send().await?;
    session.redirect("/verify-email?verified=1");
    Ok(())
}

/// `/verify-email?token=…`: confirms an address (one button, so that a mail
/// scanner following the link changes nothing). A sign-up link opened here
/// goes on to finish the sign-up.
#[component]
pub fn VerifyEmail() -> impl IntoView {
    let action = ServerAction::<EmailVerify>::new();
    let errors = FormErrors::new(action_error(action.value().get_untracked()), &[]);
    let token = query("token").unwrap_or_default();
    let verified = query("verified").is_some();
    view! {
        <Title text="Confirm your address"/>
        <main class="narrow" id="main">
            <h1>"Confirm your e-mail address"</h1>
            <FormAlert errors=errors/>
            {if verified {
                view! { <p role="status">"Your address is confirmed. " <a href="/projects">"Continue to Moke"</a></p> }.into_any()
            } else if token.is_empty() {
                view! { <p role="alert">"This link is incomplete. Open the link from the mail again."</p> }.into_any()
            } else {
                let signup = format!("/signup/confirm?token={}", super::segment(&token));
                view! {
                    <ActionForm action=action>
                        <Csrf/>
                        <input type="hidden" name="token" value=token/>
                        <button type="submit">"Confirm my address"</button>
                    </ActionForm>
                    <p class="hint">"Signing up? " <a href=signup>"Finish creating your account"</a> " instead."</p>
                }.into_any()
            }}
        </main>
    }
}

#[server(prefix = "/console/fn", endpoint = "password_reset_request")]
pub async fn password_reset_request(csrf: String, email: String) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let mut fields = Fields::default();
    let checked = fields.parse::<types::PasswordResetRequestEmail>("email", &email, EMAIL);
    fields.finish()?;
    let body = types::PasswordResetRequest { email: checked.expect("finish() refused a missing field") };
    session.anonymous_api().password_reset_request().body(body).send().await?;
    session.redirect("/reset-password?sent=1");
    Ok(())
}

#[server(prefix = "/console/fn", endpoint = "password_reset_confirm")]
pub async fn password_reset_confirm(csrf: String, token: String, password: String) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let mut fields = Fields::default();
    let checked =
        fields.parse::<types::PasswordResetConfirmPassword>("password", &password, "Use 12 characters or more.");
    fields.finish()?;
    let body = types::PasswordResetConfirm { token, password: checked.expect("finish() refused a missing field") };
    session.anonymous_api().password_reset_confirm().body(body).send().await?;
    session.redirect("/signin?reset=1");
    Ok(())
}

/// `/reset-password`: ask for a link; `?token=…` (the link): choose a new password.
#[component]
pub fn ResetPassword() -> impl IntoView {
    let ask = ServerAction::<PasswordResetRequest>::new();
    let set = ServerAction::<PasswordResetConfirm>::new();
    let ask_errors = FormErrors::new(action_error(ask.value().get_untracked()), &["email"]);
    let set_errors = FormErrors::new(action_error(set.value().get_untracked()), &["password"]);
    let token = query("token");
    let sent = query("sent").is_some();
    view! {
        <Title text="Reset your password"/>
        <main class="narrow" id="main">
            <h1>"Reset your password"</h1>
            {match (token, sent) {
                (_, true) => view! {
                    <p role="status">"If the address has an account, a link to reset its password is on its way. It is valid for 30 minutes."</p>
                }.into_any(),
                (Some(token), _) => view! {
                    <FormAlert errors=set_errors.clone()/>
                    <ActionForm action=set>
                        <Csrf/>
                        <input type="hidden" name="token" value=token/>
                        <Field label="New password" name="password" kind="password" autocomplete="new-password" hint="At least 12 characters." required=true errors=set_errors.clone()/>
                        <button type="submit">"Set password"</button>
                    </ActionForm>
                }.into_any(),
                (None, false) => view! {
                    <FormAlert errors=ask_errors.clone()/>
                    <ActionForm action=ask>
                        <Csrf/>
                        <Field label="E-mail" name="email" kind="email" autocomplete="username" required=true errors=ask_errors.clone()/>
                        <button type="submit">"Send me a link"</button>
                    </ActionForm>
                }.into_any(),
            }}
            <p><a href="/signin">"Back to sign in"</a></p>
        </main>
    }
}

#[server(prefix = "/console/fn", endpoint = "sign_out")]
pub async fn sign_out(csrf: String) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    // End the API session too; the browser forgets it whatever the API says.
    if let (Ok(api), Some(refresh_token)) = (session.api().await, session.refresh_token()) {
        let ended = api.session_delete().body(types::LogoutRequest { refresh_token: Some(refresh_token) }).send().await;
        if let Err(error) = ended {
            tracing::warn!(status = ?error.status(), "signing out: the API session could not be ended");
        }
    }
    session.sign_out();
    session.redirect("/signin");
    Ok(())
}

#[server(prefix = "/console/fn", endpoint = "org_switch")]
pub async fn org_switch(csrf: String, organization: String) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    session.switch_organization(organization).await?;
    session.redirect("/projects");
    Ok(())
}

#[server(prefix = "/console/fn", endpoint = "device_decide")]
pub async fn device_decide(
    csrf: String,
    user_code: String,
    decision: String,
    started_here: Option<String>,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let mut fields = Fields::default();
    let code = fields.parse::<types::DeviceConfirmUserCode>(
        "user_code",
        &user_code,
        "Enter the 8 letters the terminal shows, like BCDF-GHJK.",
    );
    if decision == "approve" && started_here.as_deref() != Some("yes") {
        fields.problem("started_here", "Confirm that you started this sign-in yourself, or refuse it.");
    }
    fields.finish()?;
    let code = code.expect("finish() refused a missing field");
    let api = session.api().await?;
    if decision == "approve" {
        api.device_authorization_confirm()
            .body(types::DeviceConfirm { user_code: code, organization: None })
            .send()
            .await?;
        session.redirect("/device?done=approved");
    } else {
        let code: types::DeviceDenyUserCode =
            code.to_string().parse().map_err(|_| ConsoleError::invalid(Vec::new()))?;
        api.device_authorization_deny().body(types::DeviceDeny { user_code: code }).send().await?;
        session.redirect("/device?done=denied");
    }
    Ok(())
}

/// `/device?user_code=…`: approve (or refuse) a `moke auth login` on
/// another device. Only for a signed-in person, who is told to compare the
/// code with the one the terminal shows.
#[component]
pub fn Device() -> impl IntoView {
    let action = ServerAction::<DeviceDecide>::new();
    let errors = FormErrors::new(action_error(action.value().get_untracked()), &["user_code", "started_here"]);
    let session = request_session();
    if !session.signed_in() {
        // No form (and so no new cookie) for someone not signed in here.
        session.redirect_to_sign_in();
        return ().into_any();
    }
    let code = query("user_code").unwrap_or_default();
    let done = query("done");
    // Who is about to grant what: the person and the organization the CLI will act in.
    let grantor = Suspend::new({
        let session = session.clone();
        async move {
            let me = match session.api().await {
                Ok(api) => api.me_view().send().await.ok().map(|me| me.into_inner()),
                Err(_) => None,
            };
            me.map(|me| {
                let email = me.user.map(|user| user.email).unwrap_or(me.id);
                let org = me
                    .memberships
                    .iter()
                    .find(|m| m.organization == me.organization)
                    .map_or_else(|| me.organization.to_string(), |m| m.organization_name.clone());
                view! {
                    <p class="alert">"The CLI will act as " <strong>{email}</strong> " in the organization " <strong>{org}</strong> ", with your role, for up to 90 days."</p>
                }
            })
        }
    });
    view! {
        <Title text="Sign in a device"/>
        <main class="narrow" id="main">
            <h1>"Sign in the Moke CLI"</h1>
            <FormAlert errors=errors.clone()/>
            {match done.as_deref() {
                Some("approved") => view! {
                    <p role="status">"Done: the CLI is signed in. You can close this page and go back to the terminal."</p>
                }.into_any(),
                Some(_) => view! {
                    <p role="status">"Refused: the CLI was not signed in."</p>
                }.into_any(),
                None => view! {
                    <p>"Only continue if you ran " <code>"moke auth login"</code> " yourself, just now, and the code below is the one your terminal shows. Someone who sent you this link could otherwise act as you."</p>
                    <Suspense fallback=|| ()>{grantor}</Suspense>
                    <ActionForm action=action>
                        <Csrf/>
                        <Field label="Code shown in the terminal" name="user_code" value=code placeholder="BCDF-GHJK" autocomplete="off" required=true errors=errors.clone()/>
                        <Choice label="I started this sign-in myself, on my own computer" name="started_here" errors=errors.clone()/>
                        <div class="actions">
                            <button type="submit" name="decision" value="approve">"Sign in the CLI"</button>
                            <button type="submit" name="decision" value="deny" class="secondary">"Refuse"</button>
                        </div>
                    </ActionForm>
                }.into_any(),
            }}
        </main>
    }
    .into_any()
}

#[cfg(test)]
mod tests {
    use super::safe_next;

    #[test]
    fn next_stays_on_this_site() {
        assert_eq!(safe_next(Some("/projects/web?page=2".into())), "/projects/web?page=2");
        for bad in ["//evil.example", "/\t/evil.example", "/\\evil.example", "https://evil.example", "/\n/evil", "evil"]
        {
            assert_eq!(safe_next(Some(bad.into())), "/projects", "{bad:?}");
        }
        assert_eq!(safe_next(None), "/projects");
        for acting in ["/device?user_code=BCDFGHJK", "/p/clusters/c/kubeconfig.yaml", "/p/clusters/c/kubeconfig?show=1"]
        {
            assert_eq!(safe_next(Some(acting.into())), "/projects", "{acting}");
        }
    }
}
