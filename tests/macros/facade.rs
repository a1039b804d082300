//! The facade is complete: every type an application names, and every type a public method
//! of qail's types returns, is named here through `qail::`, so a re-export left out fails to
//! compile this test. The plumbing the docs hide (protocol, templates, by-index decoding) is
//! named too: hidden is not removed.

use std::any::type_name;

/// The path of `T` as the compiler prints it.
fn name<T: ?Sized>() -> &'static str {
    type_name::<T>()
}

#[test]
fn every_public_type_is_named_through_qail() {
    let names = [
        // Connecting.
        name::<qail::Config>(),
        name::<qail::Host>(),
        name::<qail::SslMode>(),
        name::<qail::ChannelBinding>(),
        name::<qail::RequireAuth>(),
        name::<qail::AuthMethod>(),
        name::<qail::TcpOptions>(),
        name::<qail::TargetSessionAttrs>(),
        name::<qail::LoadBalanceHosts>(),
        name::<qail::Pooler>(),
        name::<qail::ProtocolVersion>(),
        name::<qail::Connection>(),
        name::<qail::CancelToken>(),
        name::<qail::TransactionStatus>(),
        // Transactions.
        name::<qail::Transaction<'static>>(),
        name::<qail::TransactionBuilder<'static>>(),
        name::<qail::IsolationLevel>(),
        // Run-time SQL.
        name::<qail::Statement>(),
        name::<qail::Row>(),
        name::<qail::Column>(),
        // Compiled queries.
        name::<qail::Query<'static, qail::NoRows>>(),
        // Pipelines.
        name::<qail::PipelineBuilder<'static, 'static>>(),
        name::<qail::PipelineBuilder<'static, 'static, qail::Atomic>>(),
        name::<qail::Pipeline<'static, Vec<qail::Query<'static, qail::NoRows>>>>(),
        name::<qail::Pipeline<'static, qail::SqlQueries<'static>, qail::PerQuery>>(),
        name::<qail::PipelineResults>(),
        name::<qail::Handle<u64>>(),
        // COPY, LISTEN/NOTIFY.
        name::<qail::CopyIn<'static>>(),
        name::<qail::Listener<'static>>(),
        name::<qail::Notification>(),
        // The pool.
        name::<qail::Pool>(),
        name::<qail::PoolBuilder>(),
        name::<qail::PoolStats>(),
        name::<qail::PoolReset>(),
        name::<qail::PooledConnection>(),
        // Shared connections.
        name::<qail::Client>(),
        name::<qail::ClientPool>(),
        name::<qail::RunTarget<'static>>(),
        // Errors and types.
        name::<qail::Error>(),
        name::<qail::DbError>(),
        // Hidden from the docs, still nameable: a query's template (`Query::template`), the
        // row `for_each` hands over, the template's parts, the protocol's encoding error and the
        // error of parsing a protocol version.
        name::<qail::Template>(),
        name::<qail::RawRow<'static>>(),
        name::<qail::template::Arg<'static>>(),
        name::<qail::template::Params<'static>>(),
        name::<qail::template::ExpectedColumn>(),
        name::<qail::template::ExpectedColumns>(),
        name::<qail::template::Encoded>(),
        name::<qail::proto::message::EncodeError>(),
        name::<qail::proto::version::UnknownVersion>(),
    ];
    for name in names {
        assert!(name.starts_with("qail_pg::"), "{name} is not qail-pg's");
    }
    assert_eq!(name::<qail::Oid>(), "u32");
    // The traits, as bounds.
    fn traits<E, A, O, D, R, T, P>()
    where
        E: qail::Executor,
        A: qail::Acquire,
        O: qail::QueryOutput,
        D: qail::Decoder, // hidden from the docs: the bound of a query's methods
        R: qail::FromRow,
        T: for<'r> qail::Decode<'r>,
        P: qail::Encode,
    {
    }
    #[derive(qail::QailRow)]
    #[allow(dead_code, reason = "only its impls are used")]
    struct One {
        n: i32,
    }
    traits::<qail::Connection, &qail::Pool, qail::NoRows, One, One, i32, i32>();
}
