//! Helpers for the unit tests beside the code (compiled only for tests).

/// Ends a unit test that cannot run on this machine, with `why` printed; under
/// CI (`CI=true`), where `.ci/run` installs every prerequisite, a skipped test
/// fails instead, so a test that silently stopped running shows as red.
/// The integration tests' `tests/common::skip` is the same rule.
pub(crate) fn skip(why: &str) {
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI=true, and this test cannot run: {why}"
    );
    crate::say!("skipped: {why}");
}
