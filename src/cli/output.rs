//! The output options every result-printing command shares.

use clap::builder::PossibleValue;
use clap::{Args, ValueEnum};

pub use crate::report::OutputFormat;

impl ValueEnum for OutputFormat {
    fn value_variants<'a>() -> &'a [Self] {
        &[OutputFormat::Text, OutputFormat::Json, OutputFormat::Csv]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            OutputFormat::Text => PossibleValue::new("text").help("A readable report (default)"),
            OutputFormat::Json => {
                PossibleValue::new("json").help("The versioned JSON document (docs/json-schema.md)")
            }
            OutputFormat::Csv => {
                PossibleValue::new("csv").help("One CSV row per target and one for the total")
            }
        })
    }
}

/// Options shared by commands that print results.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Output format on stdout.
    #[arg(long, short = 'o', value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,

    /// No progress bars or live statistics on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}
