//! storlab's entry point: parse, dispatch, print the error chain, exit.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Before clap, so that its help and errors follow `--color` too.
    storlab::console::set_color(storlab::console::color_in_args(std::env::args_os()));
    let cli = storlab::cli::Cli::parse();
    match storlab::commands::dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            storlab::errln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
