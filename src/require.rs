//! `require_*!` macros: `qail!` emits one for every PostgreSQL type whose Rust mapping needs a
//! Cargo feature. With the feature on it expands to nothing; with it off, to a compile error
//! naming the column or parameter and the feature to enable.

macro_rules! requirement {
    ($name:ident, $export:ident, $feature:literal, [$($on:literal),+], $what_types:literal) => {
        #[cfg(any($(feature = $on),+))]
        #[doc(hidden)]
        #[macro_export]
        macro_rules! $export {
            ($what:literal, $ty:literal) => {};
        }

        #[cfg(not(any($(feature = $on),+)))]
        #[doc(hidden)]
        #[macro_export]
        macro_rules! $export {
            ($what:literal, $ty:literal) => {
                ::core::compile_error!(::core::concat!(
                    $what, " has type ", $ty, ": enable the qail feature ", $feature,
                    " (in Cargo.toml: qail = { features = [", $feature, "] })"
                ));
            };
        }

        #[doc = concat!("Requires the feature for ", $what_types, ".")]
        pub use $export as $name;
    };
}

requirement!(require_uuid, __qail_require_uuid, "`uuid`", ["uuid"], "uuid");
requirement!(require_json, __qail_require_json, "`json`", ["json"], "json and jsonb");
requirement!(require_decimal, __qail_require_decimal, "`decimal`", ["decimal"], "numeric");
requirement!(require_net, __qail_require_net, "`net`", ["net"], "inet, cidr and macaddr");
requirement!(
    require_datetime,
    __qail_require_datetime,
    "`chrono` (or `time`)",
    ["chrono", "time"],
    "timestamptz, timestamp, date and time"
);
