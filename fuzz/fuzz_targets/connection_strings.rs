//! Feeds arbitrary text to the connection-string parser (URLs and `key=value` strings).
//! Every input must end in a configuration or an error: never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use qail_pg::Config;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(config) = Config::parse(text) {
        // A parsed configuration prints without its password.
        let shown = format!("{config:?}");
        if config.password.is_some() {
            assert!(shown.contains("password: Some(\"<hidden>\")"), "{shown}");
        }
    }
});
