//! Whether a compiled query conforms to what it meets at run time, checked by the connection
//! before it writes a byte or runs the statement: the values given (one per parameter), the
//! template's own bytes, and the server's Describe of the statement against the template's
//! expectations (schema drift); then the types the statement is bound and decoded with.
//! Pure functions: the connection (`conn/compiled.rs`, `conn/pipeline/`) does the I/O and
//! calls these. (The compile-time type checks of `qail!` are [`crate::typed::assertions`].)

use super::Template;
use crate::error::{Error, Kind};
use crate::types::Oid;
use crate::types::oid::{self, FIRST_USER_OID};

/// Refuses `given` values unless there is one per parameter of `template`.
pub(crate) fn check_count(template: &Template, given: usize) -> Result<(), Error> {
    let expected = template.param_oids.len();
    if given == expected {
        return Ok(());
    }
    Err(Error::new(
        Kind::Usage,
        format!(
            "the compiled query has {expected} parameters but {given} values were given; pass \
             one value per $n placeholder",
        ),
    ))
}

/// Refuses a template whose Bind prefix is not what [`Template::encode_bind_prefix`] makes of
/// its name and parameter count (a template built by hand), before it is prepared and cached.
pub(crate) fn check_bind_prefix(template: &Template) -> Result<(), Error> {
    let expected = Template::encode_bind_prefix(template.name, template.param_oids.len());
    if expected.is_ok_and(|prefix| prefix == template.bind_prefix()) {
        return Ok(());
    }
    Err(Error::new(
        Kind::Usage,
        format!(
            "the compiled query `{}` has an encoded Bind prefix that does not match its name \
             and parameter count; build it with Template::encode or Template::leak",
            template.name
        ),
    ))
}

/// Compares the server's description of the statement — its parameter types `params`
/// (ParameterDescription) and result column types `columns` (RowDescription) — with the
/// template's expectations; a difference is a schema-drift error naming the parameter or
/// column. A type the template leaves to the server (OID 0) must be a user type.
pub(crate) fn check_description<I>(
    template: &Template,
    params: &[Oid],
    columns: I,
) -> Result<(), Error>
where
    I: IntoIterator<Item = Oid>,
    I::IntoIter: ExactSizeIterator,
{
    let fix = "run `cargo qail schema pull` and rebuild, or change the query";
    let query = compiled(template);
    for (i, (&expected, &actual)) in template.param_oids.iter().zip(params).enumerate() {
        if !matches(expected, actual) {
            let wanted = match expected {
                0 => "a user-defined type".to_owned(),
                oid => oid::describe(oid),
            };
            return Err(drift(format!(
                "parameter ${} of `{}` is {} on the server but {query} expects {wanted}; {fix}",
                i + 1,
                template.sql(),
                oid::describe(actual),
            )));
        }
    }
    let columns = columns.into_iter();
    let expected_count = template.columns().count();
    if columns.len() != expected_count {
        return Err(drift(format!(
            "`{}` returns {} columns on the server but {query} expects {expected_count}; {fix}",
            template.sql(),
            columns.len(),
        )));
    }
    for (expected, actual) in template.columns().zip(columns) {
        if !matches(expected.type_oid, actual) {
            return Err(drift(format!(
                "column \"{}\" is {} on the server but {query} expects {}; {fix}",
                expected.name,
                oid::describe(actual),
                expected.type_name
            )));
        }
    }
    Ok(())
}

/// "the compiled query", and where it is written when the template knows.
fn compiled(template: &Template) -> String {
    match template.source {
        "" => "the compiled query".to_owned(),
        source => format!("the compiled query at {source}"),
    }
}

/// Whether the server's type `actual` is the expected one (any user type for OID 0).
pub(crate) fn matches(expected: Oid, actual: Oid) -> bool {
    match expected {
        // Note: a record-valued column is `record` or a composite type depending on how it is
        // written (`ROW(…)`, a derived table's row vs. a table's whole row); its fields are
        // checked one by one when it is read.
        0 => actual >= FIRST_USER_OID || actual == oid::RECORD || actual == oid::RECORD_ARRAY,
        oid => oid == actual,
    }
}

/// Schema drifts found by any connection of the process: [`Pool::stats`]' `schema_drifts`.
///
/// [`Pool::stats`]: crate::Pool::stats
pub(crate) static DRIFTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn drift(message: String) -> Error {
    DRIFTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Error::new(Kind::SchemaDrift, message)
}

/// The types to bind a described template's parameters with, given the server's `params`
/// (once [`check_description`] accepted them). A parameter the template leaves to the server
/// (OID 0, a user type) was type-checked when the query was compiled, so it is bound as OID
/// 0: the value's own binary form, without the run-time check that would refuse a `String`
/// for citext.
pub(crate) fn bound_types(template: &Template, mut params: Vec<Oid>) -> Vec<Oid> {
    for (param, &expected) in params.iter_mut().zip(template.param_oids) {
        if expected == 0 {
            *param = 0;
        }
    }
    params
}

/// The types to decode a described template's result columns as, given the server's
/// `columns`: a citext column is read as `text`, whose binary form it shares, so that it
/// decodes into `String`.
pub(crate) fn decoding_types(
    template: &Template,
    columns: impl IntoIterator<Item = Oid>,
) -> Box<[Oid]> {
    columns
        .into_iter()
        .zip(template.columns())
        .map(|(actual, expected)| {
            if expected.type_oid == 0 && expected.type_name == "citext" {
                oid::TEXT
            } else {
                actual
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template() -> &'static Template {
        Template::leak(
            "SELECT id, nick, mood FROM sailors WHERE id = $1 AND mood = $2",
            &[oid::INT8, 0],
            &[
                ("id", oid::INT8, "int8"),
                ("nick", 0, "citext"),
                ("mood", 0, "mood"),
            ],
        )
        .unwrap()
    }

    #[test]
    fn count_is_one_value_per_parameter() {
        let t = template();
        assert!(check_count(t, 2).is_ok());
        let err = check_count(t, 1).unwrap_err();
        assert!(
            err.to_string().contains("2 parameters but 1 values"),
            "{err}"
        );
        assert!(check_count(t, 3).is_err());
    }

    #[test]
    fn bind_prefix_must_be_the_encoders() {
        assert!(check_bind_prefix(template()).is_ok());
        let forged = Template {
            name: "q",
            param_oids: &[23],
            encoded: b"",
            source: "",
            changes_session: false,
        };
        let err = check_bind_prefix(&forged).unwrap_err();
        assert!(err.to_string().contains("Template::encode"), "{err}");
    }

    #[test]
    fn a_matching_description_passes() {
        let t = template();
        let user = FIRST_USER_OID + 7;
        assert!(check_description(t, &[oid::INT8, user], [oid::INT8, user, user + 1]).is_ok());
    }

    #[test]
    fn a_changed_parameter_type_is_drift() {
        let t = template();
        let user = FIRST_USER_OID + 7;
        let err = check_description(t, &[oid::INT4, user], [oid::INT8, user, user]).unwrap_err();
        assert!(err.is_schema_drift());
        assert!(err.to_string().contains("parameter $1"), "{err}");
        // A built-in type where the template expects a user type.
        let err = check_description(t, &[oid::INT8, oid::TEXT], [oid::INT8, user, user]);
        assert!(err.unwrap_err().to_string().contains("a user-defined type"));
    }

    #[test]
    fn a_changed_column_type_or_count_is_drift() {
        let t = template();
        let user = FIRST_USER_OID + 7;
        let err = check_description(t, &[oid::INT8, user], [oid::INT4, user, user]).unwrap_err();
        assert!(err.is_schema_drift());
        assert!(err.to_string().contains("column \"id\""), "{err}");
        assert!(err.to_string().contains("expects int8"), "{err}");
        let err = check_description(t, &[oid::INT8, user], [oid::INT8, oid::TEXT, user]);
        assert!(err.unwrap_err().to_string().contains("column \"nick\""));
        let err = check_description(t, &[oid::INT8, user], [oid::INT8, user]).unwrap_err();
        assert!(err.is_schema_drift());
        assert!(err.to_string().contains("returns 2 columns"), "{err}");
    }

    #[test]
    fn drift_names_where_the_query_is_written() {
        let t = Template::leak_at(
            "SELECT id FROM sailors",
            &[],
            &[("id", oid::INT8, "int8")],
            "src/sailors.rs:42",
        )
        .unwrap();
        let before = DRIFTS.load(std::sync::atomic::Ordering::Relaxed);
        let err = check_description(t, &[], [oid::INT4]).unwrap_err();
        assert!(DRIFTS.load(std::sync::atomic::Ordering::Relaxed) > before);
        assert!(
            err.to_string()
                .contains("but the compiled query at src/sailors.rs:42 expects int8"),
            "{err}"
        );
    }

    #[test]
    fn user_types_bind_as_zero_and_citext_decodes_as_text() {
        let t = template();
        let user = FIRST_USER_OID + 7;
        assert_eq!(bound_types(t, vec![oid::INT8, user]), [oid::INT8, 0]);
        assert_eq!(
            &*decoding_types(t, [oid::INT8, user, user + 1]),
            [oid::INT8, oid::TEXT, user + 1]
        );
    }
}
