use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::*;

/// Parses with only `vars` in the environment (plus `USER=alice`) and no socket directory.
fn parse_env(s: &str, vars: &[(&str, &str)]) -> Result<Config, Error> {
    parse_full(s, vars, false)
}

fn parse_full(s: &str, vars: &[(&str, &str)], socket_dir: bool) -> Result<Config, Error> {
    let var = |name: &str| {
        vars.iter()
            .chain(&[("USER", "alice")])
            .find(|(n, _)| *n == name)
            .map(|(_, v)| (*v).to_owned())
    };
    let dir_exists = |dir: &Path| socket_dir && dir == Path::new("/var/run/postgresql");
    Config::parse_in(
        s,
        &Env {
            var: &var,
            dir_exists: &dir_exists,
        },
    )
}

fn parse(s: &str) -> Config {
    parse_env(s, &[]).expect("valid connection string")
}

fn error(s: &str) -> String {
    parse_env(s, &[]).expect_err(s).to_string()
}

fn tcp(name: &str) -> Host {
    Host::Tcp(name.to_owned())
}

#[test]
fn defaults_follow_libpq() {
    let config = parse("");
    assert_eq!(config.hosts, vec![tcp("localhost")]);
    assert!(config.hostaddrs.is_empty());
    assert_eq!(config.ports, vec![5432]);
    assert_eq!(config.user, "alice");
    assert_eq!(config.dbname, "alice");
    assert_eq!(config.password, None);
    assert_eq!(config.sslmode, SslMode::Prefer);
    assert_eq!(config.channel_binding, ChannelBinding::Prefer);
    assert_eq!(config.require_auth, None);
    assert_eq!(config.connect_timeout, None);
    assert_eq!(config.application_name, None);
    assert_eq!(config.options, None);
}

#[test]
fn default_host_is_the_socket_directory_when_it_exists() {
    let config = parse_full("dbname=x", &[], true).expect("valid");
    assert_eq!(
        config.hosts,
        vec![Host::Unix(PathBuf::from("/var/run/postgresql"))]
    );
}

#[test]
fn url_fills_every_part() {
    let config = parse(
        "postgresql://app:s3cret@db.example.com:6432/shop?sslmode=verify-full&application_name=web&connect_timeout=10",
    );
    assert_eq!(config.hosts, vec![tcp("db.example.com")]);
    assert_eq!(config.ports, vec![6432]);
    assert_eq!(config.user, "app");
    assert_eq!(config.password.as_deref(), Some("s3cret"));
    assert_eq!(config.dbname, "shop");
    assert_eq!(config.sslmode, SslMode::VerifyFull);
    assert_eq!(config.application_name.as_deref(), Some("web"));
    assert_eq!(config.connect_timeout, Some(Duration::from_secs(10)));
}

#[test]
fn url_with_several_hosts_lines_up_ports() {
    let config = parse("postgres://h1:5433,h2,[::1]:5434/db");
    assert_eq!(config.hosts, vec![tcp("h1"), tcp("h2"), tcp("::1")]);
    assert_eq!(config.ports, vec![5433, 5432, 5434]);
    let targets: Vec<_> = config.targets().map(|(h, _, p)| (h.clone(), p)).collect();
    assert_eq!(targets[1], (tcp("h2"), 5432));
}

#[test]
fn url_socket_path_percent_encoded_or_as_query() {
    let unix = Host::Unix(PathBuf::from("/var/run/postgresql"));
    assert_eq!(
        parse("postgresql://%2Fvar%2Frun%2Fpostgresql/db").hosts,
        vec![unix.clone()]
    );
    assert_eq!(
        parse("postgresql:///db?host=/var/run/postgresql").hosts,
        vec![unix]
    );
}

#[test]
fn url_query_overrides_the_authority() {
    let config = parse("postgres://h1:1111/db?host=h2&port=2222&user=bob");
    assert_eq!(config.hosts, vec![tcp("h2")]);
    assert_eq!(config.ports, vec![2222]);
    assert_eq!(config.user, "bob");
}

#[test]
fn key_values_with_quotes() {
    let config =
        parse(r"host=/tmp port=5999 user=bob password='a \'b\' \\c' options='-c search_path=s'");
    assert_eq!(config.hosts, vec![Host::Unix(PathBuf::from("/tmp"))]);
    assert_eq!(config.ports, vec![5999]);
    assert_eq!(config.password.as_deref(), Some(r"a 'b' \c"));
    assert_eq!(config.dbname, "bob");
    assert_eq!(config.options.as_deref(), Some("-c search_path=s"));
}

#[test]
fn environment_supplies_what_the_string_does_not() {
    let vars = [
        ("PGHOST", "envhost"),
        ("PGPORT", "6000"),
        ("PGUSER", "envuser"),
        ("PGPASSWORD", "envpw"),
        ("PGDATABASE", "envdb"),
        ("PGSSLMODE", "require"),
        ("PGSSLROOTCERT", "/ca.pem"),
        ("PGSSLCERT", "/c.pem"),
        ("PGSSLKEY", "/k.pem"),
        ("PGCHANNELBINDING", "require"),
        ("PGREQUIREAUTH", "scram-sha-256"),
        ("PGAPPNAME", "envapp"),
        ("PGCONNECT_TIMEOUT", "7"),
        ("PGOPTIONS", "-c work_mem=1MB"),
    ];
    let config = parse_env("", &vars).expect("valid");
    assert_eq!(config.hosts, vec![tcp("envhost")]);
    assert_eq!(config.ports, vec![6000]);
    assert_eq!(config.user, "envuser");
    assert_eq!(config.password.as_deref(), Some("envpw"));
    assert_eq!(config.dbname, "envdb");
    assert_eq!(config.sslmode, SslMode::Require);
    assert_eq!(config.sslrootcert, Some(PathBuf::from("/ca.pem")));
    assert_eq!(config.sslcert, Some(PathBuf::from("/c.pem")));
    assert_eq!(config.sslkey, Some(PathBuf::from("/k.pem")));
    assert_eq!(config.channel_binding, ChannelBinding::Require);
    assert!(config.require_auth.is_some());
    assert_eq!(config.application_name.as_deref(), Some("envapp"));
    assert_eq!(config.connect_timeout, Some(Duration::from_secs(7)));
    assert_eq!(config.options.as_deref(), Some("-c work_mem=1MB"));

    let config = parse_env("host=strhost user=struser dbname=strdb", &vars).expect("valid");
    assert_eq!(config.hosts, vec![tcp("strhost")]);
    assert_eq!(config.user, "struser");
    assert_eq!(config.dbname, "strdb");
    assert_eq!(config.ports, vec![6000]);
}

#[test]
fn dbname_defaults_to_the_given_user() {
    assert_eq!(parse("user=carol").dbname, "carol");
    assert_eq!(
        parse_env("", &[("PGUSER", "dave")]).expect("valid").dbname,
        "dave"
    );
}

#[test]
fn missing_user_is_an_error_saying_what_to_set() {
    let var = |_: &str| None;
    let err = Config::parse_in(
        "",
        &Env {
            var: &var,
            dir_exists: &|_| false,
        },
    )
    .expect_err("no user anywhere");
    assert!(err.to_string().contains("PGUSER"), "{err}");
}

#[test]
fn empty_password_means_none() {
    assert_eq!(parse("password=''").password, None);
}

#[test]
fn debug_hides_the_password() {
    let config = parse("postgres://u:hunter2@h/db");
    let debug = format!("{config:?}");
    assert!(!debug.contains("hunter2"), "{debug}");
    assert!(debug.contains("<hidden>"), "{debug}");
    assert!(debug.contains("\"h\""), "{debug}");
}

#[test]
fn hostaddr_lines_up_with_hosts() {
    let config = parse("host=db.example.com,other hostaddr=127.0.0.1,");
    assert_eq!(config.hosts, vec![tcp("db.example.com"), tcp("other")]);
    let v4: IpAddr = "127.0.0.1".parse().expect("ip");
    assert_eq!(config.hostaddrs, vec![Some(v4), None]);

    let config = parse("hostaddr=::1");
    assert_eq!(config.hosts, vec![tcp("::1")]);
    assert_eq!(config.ports, vec![5432]);

    let err = error("host=a,b hostaddr=127.0.0.1");
    assert!(err.contains("one hostaddr per host"), "{err}");
    let err = error("hostaddr=localhost");
    assert!(err.contains("not a numeric IP address"), "{err}");
}

#[test]
fn ports_must_match_hosts() {
    assert_eq!(parse("host=a,b,c port=6000").ports, vec![6000; 3]);
    assert_eq!(parse("host=a,b port=1,2").ports, vec![1, 2]);
    let err = error("host=a,b,c port=1,2");
    assert!(err.contains("2 ports for 3 hosts"), "{err}");
}

#[test]
fn bad_port_names_the_key_and_range() {
    for bad in ["port=abc", "port=0", "port=70000", "port=-1"] {
        let err = error(bad);
        assert!(err.starts_with("invalid port"), "{err}");
        assert!(err.contains("1 to 65535"), "{err}");
    }
}

#[test]
fn every_sslmode() {
    for (name, mode) in [
        ("disable", SslMode::Disable),
        ("allow", SslMode::Allow),
        ("prefer", SslMode::Prefer),
        ("require", SslMode::Require),
        ("verify-ca", SslMode::VerifyCa),
        ("verify-full", SslMode::VerifyFull),
    ] {
        assert_eq!(parse(&format!("sslmode={name}")).sslmode, mode);
    }
    let err = error("sslmode=strict");
    assert_eq!(
        err,
        "invalid sslmode \"strict\": valid values are disable, allow, prefer, require, verify-ca, verify-full"
    );
}

#[test]
fn bad_environment_value_names_the_variable() {
    let err = parse_env("", &[("PGSSLMODE", "yes")]).expect_err("bad env");
    assert!(err.to_string().contains("(from PGSSLMODE)"), "{err}");
}

#[test]
fn system_root_store_implies_verify_full() {
    assert_eq!(parse("sslrootcert=system").sslmode, SslMode::VerifyFull);
    assert_eq!(
        parse("sslrootcert=system sslmode=verify-full").sslmode,
        SslMode::VerifyFull
    );
    let err = error("sslrootcert=system sslmode=require");
    assert!(err.contains("use sslmode=verify-full"), "{err}");
}

#[test]
fn channel_binding_values() {
    assert_eq!(
        parse("channel_binding=disable").channel_binding,
        ChannelBinding::Disable
    );
    assert_eq!(
        parse("channel_binding=require").channel_binding,
        ChannelBinding::Require
    );
    let err = error("channel_binding=maybe");
    assert!(err.contains("disable, prefer, require"), "{err}");
}

#[test]
fn pooler_values() {
    assert_eq!(parse("").pooler, Pooler::None);
    assert_eq!(parse("pooler=none").pooler, Pooler::None);
    assert_eq!(
        parse("postgres://a@h:6432/d?pooler=transaction").pooler,
        Pooler::Transaction
    );
    assert_eq!(
        parse("").pooler(Pooler::Transaction).pooler,
        Pooler::Transaction
    );
    let err = error("pooler=session");
    assert!(err.contains("valid values are none, transaction"), "{err}");
}

#[test]
fn protocol_versions_like_libpq_18() {
    let (v30, v32) = (ProtocolVersion::V3_0, ProtocolVersion::V3_2);
    let versions = |c: Config| {
        (
            c.min_protocol_version,
            c.max_protocol_version,
            c.requested_protocol_version(),
        )
    };
    assert_eq!(versions(parse("")), (v30, None, v30));
    assert_eq!(
        versions(parse("max_protocol_version=3.2")),
        (v30, Some(v32), v32)
    );
    assert_eq!(
        versions(parse("postgres://a@h/d?max_protocol_version=latest")),
        (v30, Some(v32), v32)
    );
    // A minimum above 3.0 with no maximum requests the latest version.
    assert_eq!(
        versions(parse("min_protocol_version=3.2")),
        (v32, None, v32)
    );
    assert_eq!(
        versions(parse("min_protocol_version=3.0 max_protocol_version=3.0")),
        (v30, Some(v30), v30)
    );
    let env = parse_env(
        "",
        &[
            ("PGMINPROTOCOLVERSION", "latest"),
            ("PGMAXPROTOCOLVERSION", "3.2"),
        ],
    )
    .unwrap();
    assert_eq!(versions(env), (v32, Some(v32), v32));
    assert_eq!(
        versions(parse("").max_protocol_version(v32)),
        (v30, Some(v32), v32)
    );
    assert_eq!(
        versions(parse("").min_protocol_version(v32)),
        (v32, None, v32)
    );

    let err = error("min_protocol_version=3.2 max_protocol_version=3.0");
    assert!(
        err.contains("min_protocol_version (3.2) is greater than max_protocol_version (3.0)"),
        "{err}"
    );
    let err = error("max_protocol_version=3.1");
    assert!(
        err.contains("invalid max_protocol_version \"3.1\": valid values are 3.0, 3.2 and latest"),
        "{err}"
    );
    let err = parse_env("", &[("PGMINPROTOCOLVERSION", "4")]).expect_err("bad env");
    assert!(
        err.to_string().contains("(from PGMINPROTOCOLVERSION)"),
        "{err}"
    );
}

#[test]
fn require_auth_lists() {
    let auth = parse("require_auth=scram-sha-256,md5")
        .require_auth
        .expect("set");
    assert!(!auth.negated);
    assert_eq!(auth.methods, vec![AuthMethod::ScramSha256, AuthMethod::Md5]);
    assert!(auth.allows(AuthMethod::Md5));
    assert!(!auth.allows(AuthMethod::Password));

    let auth = parse("require_auth=!password,!none")
        .require_auth
        .expect("set");
    assert!(auth.negated);
    assert!(!auth.allows(AuthMethod::Password));
    assert!(!auth.allows(AuthMethod::None));
    assert!(auth.allows(AuthMethod::ScramSha256));

    let auth = parse("require_auth=!gss").require_auth.expect("set");
    assert!(auth.allows(AuthMethod::Md5));
}

#[test]
fn require_auth_errors() {
    for (bad, says) in [
        ("require_auth=md5,!password", "mixes negated and plain"),
        ("require_auth=md5,md5", "more than once"),
        ("require_auth=kerberos", "unknown method \"kerberos\""),
        ("require_auth=gss", "does not support gss"),
    ] {
        let err = error(bad);
        assert!(err.starts_with("invalid require_auth"), "{err}");
        assert!(err.contains(says), "{err}");
        assert!(err.contains("valid methods are"), "{err}");
    }
}

#[test]
fn connect_timeout_like_libpq() {
    assert_eq!(parse("connect_timeout=0").connect_timeout, None);
    assert_eq!(parse("connect_timeout=-5").connect_timeout, None);
    assert_eq!(
        parse("connect_timeout=1").connect_timeout,
        Some(Duration::from_secs(2))
    );
    assert_eq!(
        parse("connect_timeout=30").connect_timeout,
        Some(Duration::from_secs(30))
    );
    let err = error("connect_timeout=1.5");
    assert!(err.contains("whole number of seconds"), "{err}");
}

#[test]
fn fallback_application_name() {
    assert_eq!(
        parse("fallback_application_name=fb")
            .application_name
            .as_deref(),
        Some("fb")
    );
    assert_eq!(
        parse("fallback_application_name=fb application_name=app")
            .application_name
            .as_deref(),
        Some("app")
    );
}

#[test]
fn unknown_key_lists_the_valid_ones() {
    let err = error("host=h sslmdoe=require");
    assert!(
        err.starts_with("invalid connection option \"sslmdoe\""),
        "{err}"
    );
    assert!(err.contains("sslmode"), "{err}");
    let err = error("postgres://h/db?colour=blue");
    assert!(err.contains("\"colour\""), "{err}");
}

#[test]
fn errors_never_show_the_password() {
    for s in [
        "password=hunter2 sslmode=bogus",
        "postgres://u:hunter2@h/db?port=x",
        "password=hunter2 nonsense=1",
    ] {
        let err = parse_env(s, &[]).expect_err(s);
        assert!(!err.to_string().contains("hunter2"), "{err}");
        assert!(!format!("{err:?}").contains("hunter2"), "{err:?}");
    }
}

#[test]
fn from_str_and_from_env_use_the_process() {
    let config: Config = "host=h user=u".parse().expect("valid");
    assert_eq!(config.user, "u");
}

#[test]
fn a_service_fills_in_what_the_connection_string_leaves_unset() {
    let dir = std::env::temp_dir().join(format!("qail-service-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("pg_service.conf");
    std::fs::write(
        &file,
        "[shop]\nhost=db.example.com\nport=6432\ndbname=shop\n[bad]\nport=x\n[odd]\nnope=1\n",
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let config = parse_env(
        "service=shop",
        &[("PGSERVICEFILE", file), ("PGPORT", "7000")],
    )
    .unwrap();
    assert_eq!(config.hosts, [tcp("db.example.com")]);
    assert_eq!(config.ports, [6432], "the service wins over PGPORT");
    assert_eq!(config.dbname, "shop");
    let config = parse_env(
        "port=5999",
        &[("PGSERVICEFILE", file), ("PGSERVICE", "shop")],
    )
    .unwrap();
    assert_eq!(
        config.ports,
        [5999],
        "the connection string wins over the service"
    );
    assert_eq!(config.dbname, "shop");
    let e = parse_env("service=missing", &[("PGSERVICEFILE", file)])
        .unwrap_err()
        .to_string();
    assert!(e.contains("service \"missing\" not found"), "{e}");
    let e = parse_env("service=bad", &[("PGSERVICEFILE", file)])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("invalid port \"x\" (from the service file)"),
        "{e}"
    );
    let e = parse_env("service=odd", &[("PGSERVICEFILE", file)])
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"nope\""), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn setters_give_what_the_keywords_give() {
    let parsed = parse(
        "host=db1,db2 hostaddr=10.0.0.1, port=5433,5434 user=app password=secret \
         passfile=/p dbname=shop sslmode=verify-full sslrootcert=/ca sslcert=/c sslkey=/k \
         channel_binding=require require_auth=!md5 application_name=reports \
         connect_timeout=7 options=-cx=1 keepalives_idle=30 tcp_user_timeout=9000",
    );
    let set = parse("")
        .hosts([tcp("db1"), tcp("db2")])
        .hostaddrs([Some("10.0.0.1".parse().unwrap()), None])
        .ports([5433, 5434])
        .user("app")
        .password("secret")
        .passfile("/p")
        .dbname("shop")
        .sslmode(SslMode::VerifyFull)
        .sslrootcert("/ca")
        .sslcert("/c")
        .sslkey("/k")
        .channel_binding(ChannelBinding::Require)
        .require_auth(RequireAuth {
            negated: true,
            methods: vec![AuthMethod::Md5],
        })
        .application_name("reports")
        .connect_timeout(Duration::from_secs(7))
        .options("-cx=1")
        .tcp(TcpOptions {
            keepalives_idle: Some(Duration::from_secs(30)),
            tcp_user_timeout: Some(Duration::from_millis(9000)),
            ..TcpOptions::default()
        });
    assert_eq!(set, parsed);
}

#[test]
fn tcp_options_like_libpq() {
    let default = parse("host=h");
    assert_eq!(default.tcp, TcpOptions::default());
    assert!(default.tcp.keepalives);
    let set = parse(
        "host=h keepalives=1 keepalives_idle=30 keepalives_interval=5 keepalives_count=3 tcp_user_timeout=9000",
    );
    assert_eq!(set.tcp.keepalives_idle, Some(Duration::from_secs(30)));
    assert_eq!(set.tcp.keepalives_interval, Some(Duration::from_secs(5)));
    assert_eq!(set.tcp.keepalives_count, Some(3));
    assert_eq!(set.tcp.tcp_user_timeout, Some(Duration::from_millis(9000)));
    // Zero means the operating system's default, as in libpq.
    let zero = parse("host=h keepalives_idle=0 tcp_user_timeout=0");
    assert_eq!(zero.tcp.keepalives_idle, None);
    assert_eq!(zero.tcp.tcp_user_timeout, None);
    assert!(!parse("host=h keepalives=0").tcp.keepalives);
    let err = error("keepalives_idle=soon");
    assert!(err.contains("keepalives_idle"), "{err}");
    let err = error("keepalives=yes");
    assert!(err.contains("keepalives"), "{err}");
}

#[test]
fn target_session_attrs_takes_libpqs_six_modes() {
    assert_eq!(parse("").target_session_attrs, TargetSessionAttrs::Any);
    for (name, attrs) in [
        ("any", TargetSessionAttrs::Any),
        ("read-write", TargetSessionAttrs::ReadWrite),
        ("read-only", TargetSessionAttrs::ReadOnly),
        ("primary", TargetSessionAttrs::Primary),
        ("standby", TargetSessionAttrs::Standby),
        ("prefer-standby", TargetSessionAttrs::PreferStandby),
    ] {
        assert_eq!(
            parse(&format!("target_session_attrs={name}")).target_session_attrs,
            attrs
        );
        assert_eq!(
            parse(&format!("postgres://h1,h2/db?target_session_attrs={name}")).target_session_attrs,
            attrs
        );
    }
    let from_env = parse_env("", &[("PGTARGETSESSIONATTRS", "standby")]).unwrap();
    assert_eq!(from_env.target_session_attrs, TargetSessionAttrs::Standby);
    let e = error("target_session_attrs=replica");
    assert!(
        e.contains("invalid target_session_attrs \"replica\"")
            && e.contains("any, read-write, read-only, primary, standby, prefer-standby"),
        "{e}"
    );
}

#[test]
fn load_balance_hosts_is_disable_or_random() {
    assert_eq!(parse("").load_balance_hosts, LoadBalanceHosts::Disable);
    assert_eq!(
        parse("host=a,b load_balance_hosts=random").load_balance_hosts,
        LoadBalanceHosts::Random
    );
    assert_eq!(
        parse("postgres://a,b/db?load_balance_hosts=disable").load_balance_hosts,
        LoadBalanceHosts::Disable
    );
    let from_env = parse_env("", &[("PGLOADBALANCEHOSTS", "random")]).unwrap();
    assert_eq!(from_env.load_balance_hosts, LoadBalanceHosts::Random);
    let e = parse_env("", &[("PGLOADBALANCEHOSTS", "round-robin")])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("(from PGLOADBALANCEHOSTS)") && e.contains("disable, random"),
        "{e}"
    );
}

#[test]
fn a_host_list_lines_up_with_its_ports() {
    let config = parse("host=127.0.0.1,127.0.0.1 port=5441,5440 target_session_attrs=primary");
    assert_eq!(config.hosts, vec![tcp("127.0.0.1"), tcp("127.0.0.1")]);
    assert_eq!(config.ports, vec![5441, 5440]);
    assert_eq!(config.target_session_attrs, TargetSessionAttrs::Primary);
}

#[test]
fn setters_set_the_host_selection_keys() {
    let config = parse("")
        .target_session_attrs(TargetSessionAttrs::PreferStandby)
        .load_balance_hosts(LoadBalanceHosts::Random);
    assert_eq!(
        config.target_session_attrs,
        TargetSessionAttrs::PreferStandby
    );
    assert_eq!(config.load_balance_hosts, LoadBalanceHosts::Random);
}
