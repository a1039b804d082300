//! LISTEN/NOTIFY: notifications are buffered whenever they arrive (during any query, or
//! while waiting for one) and handed out in order; none is dropped.
//!
//! See <https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-ASYNC>.

use super::Connection;
use crate::error::Error;
use crate::proto::message::NotificationResponse;

/// A notification sent with `NOTIFY channel, 'payload'` on a channel this session listens to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    process_id: i32,
    channel: String,
    payload: String,
}

impl Notification {
    /// The process ID of the notifying session.
    pub fn process_id(&self) -> i32 {
        self.process_id
    }

    /// The channel name.
    pub fn channel(&self) -> &str {
        &self.channel
    }

    /// The payload (empty when none was given).
    pub fn payload(&self) -> &str {
        &self.payload
    }

    /// The notification a NotificationResponse carries.
    pub(crate) fn from_message(n: NotificationResponse<'_>) -> Notification {
        Notification {
            process_id: n.process_id,
            channel: n.channel.to_owned(),
            payload: n.payload.to_owned(),
        }
    }
}

impl Connection {
    /// Takes every notification received so far, oldest first, without waiting.
    ///
    /// Notifications that arrive during any query are kept here until taken.
    pub fn notifications(&mut self) -> Vec<Notification> {
        self.notifications.drain(..).collect()
    }

    /// A [`Listener`] that waits for notifications on this connection.
    ///
    /// ```no_run
    /// # async fn run(conn: &mut qail_pg::Connection) -> Result<(), qail_pg::Error> {
    /// conn.batch_execute("LISTEN jobs").await?;
    /// let note = conn.listener().recv().await?;
    /// println!("{}: {}", note.channel(), note.payload());
    /// # Ok(()) }
    /// ```
    pub fn listener(&mut self) -> Listener<'_> {
        Listener { conn: self }
    }

    /// Waits for the next notification: the oldest buffered one, else the next to arrive.
    async fn next_notification(&mut self) -> Result<Notification, Error> {
        self.ready_without_reset().await?;
        loop {
            if let Some(n) = self.notifications.pop_front() {
                return Ok(n);
            }
            // Note: the connection is idle, so only asynchronous messages may arrive; a
            // dropped future loses nothing, since whole messages are buffered before use.
            let message = self.stream.next_frame().await?;
            if !message.is_asynchronous() {
                return Err(self.protocol_error("a message while the connection was idle"));
            }
            self.on_async(message)?;
        }
    }
}

/// Waits for notifications on a connection that has run `LISTEN channel`.
///
/// Dropping a [`recv`](Listener::recv) future loses no notification.
#[derive(Debug)]
pub struct Listener<'c> {
    conn: &'c mut Connection,
}

impl Listener<'_> {
    /// The next notification, waiting while the connection is idle.
    pub async fn recv(&mut self) -> Result<Notification, Error> {
        self.conn.next_notification().await
    }

    /// The oldest notification already received, without waiting.
    pub fn try_recv(&mut self) -> Option<Notification> {
        self.conn.notifications.pop_front()
    }
}
