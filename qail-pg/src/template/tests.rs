use super::*;
use crate::proto::message::{Bind, Format};

#[test]
fn parse_bytes_are_the_run_time_encoding() {
    let sql = "SELECT name FROM harbors WHERE id = $1";
    let name = statement_name(sql, &[2950]);
    let parse = Template::encode_parse(sql, &name, &[2950]).unwrap();
    let mut runtime = Vec::new();
    Parse {
        name: &name,
        query: sql,
        param_types: &[2950],
    }
    .encode(&mut runtime)
    .unwrap();
    assert_eq!(parse, runtime);
    assert_eq!(parse[0], b'P');
}

#[test]
fn bind_prefix_is_the_run_time_encoding() {
    for params in [&[][..], &[&42i32 as &(dyn Encode + Sync), &7i32][..]] {
        let name = "q0123456789abcdef";
        let prefix = Template::encode_bind_prefix(name, params.len()).unwrap();
        let mut runtime = Vec::new();
        Bind {
            portal: "",
            statement: name,
            params,
            param_types: &vec![23; params.len()],
            result_format: Format::Binary,
        }
        .encode(&mut runtime)
        .unwrap();
        assert_eq!(&runtime[5..5 + prefix.len()], &prefix[..]);
        let count = u16::try_from(params.len()).unwrap().to_be_bytes();
        assert_eq!(&runtime[5 + prefix.len()..7 + prefix.len()], &count);
    }
}

#[test]
fn encoded_templates_read_back_their_parts() {
    let sql = "SELECT id, name FROM harbors WHERE country = $1 AND code = $2";
    let oids = [25, 1043];
    let columns = [("id", 2950, "uuid"), ("name", 0, "citext")];
    let t = Template::leak(sql, &oids, &columns).unwrap();
    assert_eq!(t.name, statement_name(sql, &oids));
    assert_eq!(t.sql(), sql);
    assert_eq!(t.param_oids, &oids);
    assert_eq!(
        t.parse(),
        Template::encode_parse(sql, t.name, &oids).unwrap()
    );
    assert_eq!(
        t.bind_prefix(),
        Template::encode_bind_prefix(t.name, 2).unwrap()
    );
    let read: Vec<_> = t
        .columns()
        .map(|c| (c.name, c.type_oid, c.type_name))
        .collect();
    assert_eq!(read, columns);
    let none = Template::leak("SELECT 1 WHERE false", &[], &[]).unwrap();
    assert_eq!(none.sql(), "SELECT 1 WHERE false");
    assert_eq!(none.columns().count(), 0);
}

#[test]
fn hand_made_bytes_read_as_an_empty_statement() {
    for encoded in [
        &b""[..],
        b"\xff\xff\xff\xff\x00\x09P",
        b"\x00\x00\x00\x01\x00\x00P\x00\x05",
    ] {
        let t = Template {
            name: "q",
            param_oids: &[],
            encoded,
        };
        assert!(t.bind_prefix().is_empty() || t.parse().is_empty());
        assert_eq!(t.sql(), "");
        assert!(t.columns().count() <= 5);
    }
}

#[test]
fn encoders_refuse_nul() {
    assert!(Template::encode("SELECT '\0'", &[], &[]).is_err());
    assert!(Template::encode_parse("SELECT '\0'", "q", &[]).is_err());
    assert!(Template::encode_bind_prefix("q\0", 0).is_err());
}

#[test]
fn statement_names_are_stable_and_depend_on_types() {
    let a = statement_name("SELECT $1", &[23]);
    assert_eq!(a, statement_name("SELECT $1", &[23]));
    assert_ne!(a, statement_name("SELECT $1", &[20]));
    assert_ne!(a, statement_name("SELECT $1 ", &[23]));
    assert_eq!(a.len(), 17);
    assert!(a.starts_with('q'));
    // FNV-1a of the empty input followed by the NUL separator.
    assert_eq!(statement_name("", &[]), "qaf63bd4c8601b7df");
}

#[test]
fn raw_row_reads_in_order_and_skips() {
    let body = b"\0\x03\0\0\0\x04\0\0\0\x2a\xff\xff\xff\xff\0\0\0\x02hi";
    let mut row = RawRow::new(DataRow::decode(body).unwrap());
    assert_eq!(row.len(), 3);
    assert_eq!(row.get::<i32>(0, 23).unwrap(), 42);
    assert_eq!(row.get::<String>(2, 25).unwrap(), "hi");
    assert!(row.get::<i32>(1, 23).is_err(), "going back is refused");
}

#[test]
fn raw_row_reports_null_and_bad_type_and_missing_column() {
    let body = b"\0\x02\xff\xff\xff\xff\0\0\0\x04\0\0\0\x2a";
    let mut row = RawRow::new(DataRow::decode(body).unwrap());
    let err = row.get::<i32>(0, 23).unwrap_err();
    assert!(err.to_string().contains("NULL"), "{err}");
    let err = row.get::<String>(1, 23).unwrap_err();
    assert!(err.to_string().contains("column 1"), "{err}");
    let mut row = RawRow::new(DataRow::decode(body).unwrap());
    assert_eq!(row.get::<Option<i32>>(0, 23).unwrap(), None);
    assert!(row.get::<i32>(5, 23).is_err());
}

#[test]
fn raw_row_refuses_malformed_columns() {
    // A column claiming 9 bytes where 2 follow.
    let body = b"\0\x01\0\0\0\x09ab";
    let err = RawRow::new(DataRow::decode(body).unwrap())
        .get::<String>(0, 25)
        .unwrap_err();
    assert!(err.to_string().contains("truncated"), "{err}");
    // A negative length other than -1 (NULL).
    let body = b"\0\x01\xff\xff\xff\xfe";
    let err = RawRow::new(DataRow::decode(body).unwrap())
        .get::<Option<i32>>(0, 23)
        .unwrap_err();
    assert!(err.to_string().contains("negative length"), "{err}");
    // A count larger than the columns present.
    let body = b"\0\x02\0\0\0\x01a";
    let mut row = RawRow::new(DataRow::decode(body).unwrap());
    assert_eq!(row.get_next::<String>(&[25, 25]).unwrap(), "a");
    assert!(row.get_next::<String>(&[25, 25]).is_err());
    // More fields than the statement's columns.
    let body = b"\0\x01\0\0\0\x01a";
    let mut row = RawRow::new(DataRow::decode(body).unwrap());
    assert_eq!(row.get_next::<String>(&[25]).unwrap(), "a");
    let err = row.get_next::<String>(&[25]).unwrap_err();
    assert!(err.to_string().contains("more columns"), "{err}");
}

#[test]
fn params_inline_and_heap() {
    let values: Vec<i32> = (0..20).collect();
    let small = Params::new([&values[0] as &(dyn Encode + Sync), &values[1]]);
    assert_eq!(small.as_slice().len(), 2);
    let refs: [&(dyn Encode + Sync); 20] = std::array::from_fn(|i| &values[i] as _);
    let big = Params::new(refs);
    assert_eq!(big.as_slice().len(), 20);
    assert_eq!(Params::new([]).as_slice().len(), 0);
}
