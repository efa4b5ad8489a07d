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
            // An error can quote what storlab did not write (a name, a
            // program's output): never raw on the terminal.
            let chain = format!("{e:#}");
            storlab::errln!("error: {}", storlab::foreign::visible_lines(&chain));
            ExitCode::FAILURE
        }
    }
}
