//! `cargo qail`: schema snapshot commands and the analyzer on the command line.

fn main() {
    eprintln!("cargo qail: no commands are available in this build yet");
    std::process::exit(2);
}
