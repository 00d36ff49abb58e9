//! The CLI's help and fixed outputs, as people see them: a change to a
//! command's shape shows up here as a snapshot diff to review.

use std::process::Command;

fn moke(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_moke"))
        .args(args)
        .env_clear()
        .env("MOKE_CONFIG_DIR", "/nonexistent/moke-golden")
        .output()
        .expect("moke runs");
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text += &String::from_utf8_lossy(&output.stderr);
    text
}

#[test]
fn top_level_help() {
    insta::assert_snapshot!(moke(&["--help"]));
}

#[test]
fn cluster_create_help_has_its_shortcuts_and_wait() {
    insta::assert_snapshot!(moke(&["cluster", "create", "--help"]));
}

#[test]
fn auth_login_help() {
    insta::assert_snapshot!(moke(&["auth", "login", "--help"]));
}

#[test]
fn a_command_without_a_profile_says_how_to_sign_in() {
    insta::assert_snapshot!(moke(&["project", "list", "--org", "org_00000000000000000000000000000000"]));
}

#[test]
fn a_secret_on_the_command_line_is_warned_about() {
    let output = Command::new(env!("CARGO_BIN_EXE_moke"))
        .args(["account", "confirm", "--token", "abc", "--password", "a long passphrase"])
        .env_clear()
        .env("MOKE_CONFIG_DIR", "/nonexistent/moke-golden")
        // Nothing listens on port 1: the call fails after the warnings.
        .env("MOKE_HOST", "http://127.0.0.1:1")
        .output()
        .expect("moke runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("warning: --password on the command line"), "{stderr}");
    assert!(stderr.contains("warning: --token on the command line"), "{stderr}");
    assert!(!output.status.success());
}
