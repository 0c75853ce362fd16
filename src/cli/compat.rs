//! `iosim sqlio`, `iosim diskspd`, `iosim translate`: legacy command lines.

use clap::Args;

/// Raw arguments of `iosim sqlio`, `iosim diskspd` and `iosim translate`: the
/// legacy tools glue values to flags (`-frandom`, `-b8K`), so src/compat parses them.
#[derive(Debug, Clone, Args)]
pub struct CompatArgs {
    /// The legacy command line, unchanged (plus --drive L=PATH, --disk N=DEV, --allow-destroy, --json FILE).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}
