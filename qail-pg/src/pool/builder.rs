//! Pool options and the builder that opens a pool with them.

use std::time::Duration;

use super::Pool;
use crate::config::Config;
use crate::error::{Error, Kind};

/// The options a pool runs with; see [`Builder`] for what each means. The replicas' pools
/// share them.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub(crate) max_size: usize,
    pub(crate) min_idle: usize,
    pub(crate) acquire_timeout: Option<Duration>,
    pub(crate) idle_timeout: Option<Duration>,
    pub(crate) max_lifetime: Option<Duration>,
    pub(crate) health_check_after: Option<Duration>,
    pub(crate) drain_timeout: Duration,
    pub(crate) warm_up: Vec<String>,
    pub(crate) replica_retry_after: Duration,
    pub(crate) reset: Reset,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            max_size: 10,
            min_idle: 0,
            acquire_timeout: Some(Duration::from_secs(30)),
            idle_timeout: Some(Duration::from_secs(10 * 60)),
            max_lifetime: Some(Duration::from_secs(30 * 60)),
            health_check_after: Some(Duration::from_secs(30)),
            drain_timeout: Duration::from_secs(5),
            warm_up: Vec::new(),
            replica_retry_after: Duration::from_secs(5),
            reset: Reset::Session,
        }
    }
}

/// What the pool resets on a connection returned to it, before the next user gets it; see
/// [`Builder::reset`].
///
/// Either way the connection's own client-side state is reset too: its notice handler, its
/// queue of notifications and its query time-out. A connection whose session did not change
/// and that left no transaction open is returned with nothing sent under either choice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reset {
    /// The whole session (the default): a transaction left open or failed is rolled back,
    /// and cursors are closed, the session authorization and role, every setting made with
    /// `SET` or `set_config`, `LISTEN` registrations, session advisory locks, temporary
    /// tables and sequence state (`currval`) return to what a new connection has — `DISCARD
    /// ALL` without `DEALLOCATE ALL`: prepared statements, the statement cache's and those of
    /// SQL `PREPARE`, are kept. Safe whatever the previous user did. Sent without waiting
    /// for the answer, as one message; the server runs it while the connection sits idle.
    ///
    /// Sent only when the session may have changed since the connection was opened or last
    /// reset; otherwise the release is [`Reset::Transaction`]'s, which sends nothing when no
    /// transaction is open. The session counts as changed after any SQL text given at run
    /// time (`query`, `execute`, `batch_execute`, `prepare`, COPY, a pipeline's SQL, a
    /// [`Template::leak`](crate::Template::leak)), after a compiled statement marked
    /// [`changes_session`](crate::Template::changes_session), and when the server reports a
    /// setting's new value. `qail!` marks a write (INSERT, UPDATE, DELETE, MERGE, COPY: a
    /// column default's `nextval` sets `currval`, and triggers can do anything), a call of
    /// `set_config`, of a session advisory lock or unlock function (not the `_xact_` ones),
    /// of `nextval` or `setval`, and a call of any function that is not built into
    /// PostgreSQL, also when a view read or a table's row-level security policy calls it (the
    /// snapshot records those views and tables). Not seen: a function a domain's CHECK calls,
    /// or behind an operator or a cast the schema or an extension defines, when it changes
    /// the session and the server reports nothing.
    #[default]
    Session,
    /// Only the transaction: a transaction left open or failed is rolled back, as a pooler in
    /// transaction mode does; nothing is sent otherwise. Safe when no user of the pool
    /// changes session state, or each user sets what it relies on before it relies on it:
    /// with this choice a setting made with `SET` (`search_path`, `statement_timeout`, the
    /// role…), a temporary table, a session advisory lock, a `LISTEN`, an open `WITH HOLD`
    /// cursor or a statement prepared with SQL `PREPARE` reaches the next user of the
    /// connection. State scoped to a transaction (`SET LOCAL`, `pg_advisory_xact_lock`,
    /// `ON COMMIT DROP` tables) is undone by the rollback or the commit, so it is safe here.
    /// Saves the server a transaction per release and the client the reading of its reply.
    Transaction,
}

/// Sizes, time-outs and warm-up statements for a [`Pool`]; from [`Pool::builder`].
///
/// ```no_run
/// # async fn run() -> Result<(), qail_pg::Error> {
/// use std::time::Duration;
///
/// let pool = qail_pg::Pool::builder()
///     .max_size(20)
///     .min_idle(2)
///     .acquire_timeout(Some(Duration::from_secs(5)))
///     .warm_up("SELECT id, name FROM harbors WHERE id = $1")
///     .connect("postgres://app@localhost/app")
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default)]
#[must_use = "a builder does nothing until connect or connect_with"]
pub struct Builder {
    options: Options,
    /// Each replica's configuration, or why its connection string did not parse (reported
    /// by `connect`).
    replicas: Vec<Result<Config, String>>,
    /// Whether opening the pool runs [`Pool::verify`].
    verify: bool,
}

impl Builder {
    pub(crate) fn new() -> Builder {
        Builder::default()
    }

    /// The most connections the pool holds open at once, idle and in use (default 10).
    pub fn max_size(mut self, max_size: usize) -> Builder {
        self.options.max_size = max_size;
        self
    }

    /// How many idle connections the pool keeps open, opening them in the background when
    /// connections are closed (default 0). They are exempt from the idle time-out, not from
    /// the maximum lifetime.
    pub fn min_idle(mut self, min_idle: usize) -> Builder {
        self.options.min_idle = min_idle;
        self
    }

    /// How long [`Pool::acquire`] waits for a connection, including opening one, before it
    /// returns an error for which [`Error::is_timeout`] is true (default 30 s; `None` waits
    /// for ever).
    pub fn acquire_timeout(mut self, timeout: Option<Duration>) -> Builder {
        self.options.acquire_timeout = timeout;
        self
    }

    /// How long a connection may sit idle before the pool closes it, as long as more than
    /// `min_idle` are idle (default 10 minutes; `None` keeps idle connections).
    pub fn idle_timeout(mut self, timeout: Option<Duration>) -> Builder {
        self.options.idle_timeout = timeout;
        self
    }

    /// How long a connection may live: older ones are closed when idle or returned, never
    /// taken from under a user (default 30 minutes; `None` for no limit).
    pub fn max_lifetime(mut self, lifetime: Option<Duration>) -> Builder {
        self.options.max_lifetime = lifetime;
        self
    }

    /// A connection idle for longer than this is checked with a round trip (an empty query,
    /// which also waits for the answer to the reset of its previous use) before it is handed
    /// out; a dead one is replaced (default 30 s). `None` never checks; `Some(Duration::ZERO)`
    /// checks every checkout, so that a failed reset is always caught by [`Pool::acquire`],
    /// never by the first call. Without a round trip, every checkout already replaces a
    /// connection the server closed while it was idle, or whose reset has been answered with
    /// an error.
    pub fn health_check_after(mut self, idle: Option<Duration>) -> Builder {
        self.options.health_check_after = idle;
        self
    }

    /// When a call is cancelled mid-flight (its future dropped), the connection goes back to
    /// the pool only after its outstanding replies are read, in the background; if that takes
    /// longer than this, the connection is closed instead (default 5 s).
    pub fn drain_timeout(mut self, timeout: Duration) -> Builder {
        self.options.drain_timeout = timeout;
        self
    }

    /// A statement prepared on every new connection, so its first use skips the Parse round
    /// trip. Prepared statements survive the reset between users. Session settings belong in
    /// the connection string's `options` (`-c search_path=app`), not here: the reset returns
    /// every setting to its connection-time value.
    pub fn warm_up(mut self, sql: impl Into<String>) -> Builder {
        self.options.warm_up.push(sql.into());
        self
    }

    /// What is reset on a connection returned to the pool (default [`Reset::Session`], the
    /// whole session; [`Reset::Transaction`] only rolls back a transaction left open).
    /// Behind a pooler in transaction mode (`pooler=transaction`) the reset is only the
    /// rollback either way: the pooler resets its server sessions itself.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), qail_pg::Error> {
    /// // Every user of this pool runs only queries that change no session state.
    /// let pool = qail_pg::Pool::builder()
    ///     .reset(qail_pg::PoolReset::Transaction)
    ///     .connect("postgres://app@localhost/app")
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn reset(mut self, reset: Reset) -> Builder {
        self.options.reset = reset;
        self
    }

    /// A read replica for [`Pool::acquire_read`], as a libpq connection string (URL or
    /// `key=value`; `PG*` variables fill in the rest). Each replica gets a pool of its own
    /// with this builder's sizes and time-outs; its connections open when reads first need
    /// them. Add `target_session_attrs=standby` to never read from a replica that was
    /// promoted, and a `connect_timeout` to leave out quickly one that does not answer. An
    /// invalid string is reported by `connect`.
    pub fn replica(mut self, url: &str) -> Builder {
        self.replicas
            .push(Config::parse(url).map_err(|e| e.to_string()));
        self
    }

    /// A read replica for [`Pool::acquire_read`], as a parsed [`Config`]; see
    /// [`Builder::replica`].
    pub fn replica_config(mut self, config: Config) -> Builder {
        self.replicas.push(Ok(config));
        self
    }

    /// How long reads leave out a replica whose acquire failed before trying it again
    /// (default 5 s). Meanwhile reads go to the other replicas, or to the primary.
    pub fn replica_retry_after(mut self, wait: Duration) -> Builder {
        self.options.replica_retry_after = wait;
        self
    }

    /// Whether opening the pool checks every `qail!` statement of the binary against the
    /// database ([`Pool::verify`]) and fails, naming each drifted statement by `file:line`,
    /// when one no longer matches (default false).
    pub fn verify_statements(mut self, verify: bool) -> Builder {
        self.verify = verify;
        self
    }

    /// Opens the pool with a libpq connection string (URL or `key=value`; `PG*` variables
    /// fill in the rest). One connection (or `min_idle`) is opened now, so a wrong address or
    /// password is reported here.
    pub async fn connect(self, url: &str) -> Result<Pool, Error> {
        let config = Config::parse(url)?;
        self.connect_with(config).await
    }

    /// Opens the pool with a parsed [`Config`].
    pub async fn connect_with(self, config: Config) -> Result<Pool, Error> {
        let options = self.options;
        if options.max_size == 0 {
            return Err(Error::new(
                Kind::Config,
                "the pool's max_size is 0, so no connection could ever be acquired; set \
                 max_size to 1 or more",
            ));
        }
        if options.min_idle > options.max_size {
            return Err(Error::new(
                Kind::Config,
                format!(
                    "the pool's min_idle ({}) is larger than its max_size ({}); lower min_idle \
                     or raise max_size",
                    options.min_idle, options.max_size
                ),
            ));
        }
        let replicas = self
            .replicas
            .into_iter()
            .map(|replica| {
                replica.map_err(|e| {
                    Error::new(
                        Kind::Config,
                        format!("invalid replica connection string: {e}"),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let pool = Pool::open(config, options, replicas).await?;
        if self.verify {
            pool.verify().await?;
        }
        Ok(pool)
    }
}
