//! LISTEN/NOTIFY: notifications are buffered whenever they arrive (during any query, or
//! while waiting for one) and handed out in order.
//!
//! The buffer is bounded ([`Connection::set_notification_capacity`], 10,000 by default):
//! when a notification arrives and the buffer is full, the oldest one is dropped, and the
//! notification handed out after it says how many were dropped just before it
//! ([`Notification::missed_before`]). Nothing is dropped silently, and a connection whose
//! notifications are never taken cannot grow without limit.
//!
//! See <https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-ASYNC>.

use std::collections::VecDeque;

use super::Connection;
use crate::error::Error;
use crate::proto::message::NotificationResponse;

/// A notification sent with `NOTIFY channel, 'payload'` on a channel this session listens to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    process_id: i32,
    channel: String,
    payload: String,
    missed_before: u64,
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

    /// How many notifications were dropped just before this one because the connection's
    /// buffer was full ([`Connection::set_notification_capacity`]): 0 unless some were lost.
    pub fn missed_before(&self) -> u64 {
        self.missed_before
    }

    /// The notification a NotificationResponse carries.
    pub(crate) fn from_message(n: NotificationResponse<'_>) -> Notification {
        Notification {
            process_id: n.process_id,
            channel: n.channel.to_owned(),
            payload: n.payload.to_owned(),
            missed_before: 0,
        }
    }
}

/// The notifications received and not yet taken, at most `capacity` of them.
#[derive(Debug)]
pub(crate) struct Queue {
    queue: VecDeque<Notification>,
    capacity: usize,
}

/// How many notifications a connection keeps by default.
const DEFAULT_CAPACITY: usize = 10_000;

impl Default for Queue {
    fn default() -> Queue {
        Queue {
            queue: VecDeque::new(),
            capacity: DEFAULT_CAPACITY,
        }
    }
}

impl Queue {
    /// Adds a notification; when full, drops the oldest first and counts it in the
    /// `missed_before` of the one that is now next.
    pub(crate) fn push(&mut self, mut notification: Notification) {
        if self.queue.len() >= self.capacity {
            self.drop_oldest(&mut notification);
        }
        self.queue.push_back(notification);
    }

    fn pop_front(&mut self) -> Option<Notification> {
        self.queue.pop_front()
    }

    /// Sets the capacity (at least 1), dropping the oldest notifications beyond it.
    fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity.max(1);
        while self.queue.len() > self.capacity {
            let Some(mut newest) = self.queue.pop_back() else {
                break;
            };
            self.drop_oldest(&mut newest);
            self.queue.push_back(newest);
        }
    }

    /// Drops the oldest notification; the next one (`newest` when none is left) counts it.
    fn drop_oldest(&mut self, newest: &mut Notification) {
        let Some(dropped) = self.queue.pop_front() else {
            return;
        };
        let missed = dropped.missed_before.saturating_add(1);
        let next = self.queue.front_mut().unwrap_or(newest);
        next.missed_before = next.missed_before.saturating_add(missed);
    }
}

impl Connection {
    /// Takes every notification received so far, oldest first, without waiting.
    ///
    /// Notifications that arrive during any query are kept here until taken, up to the
    /// [capacity](Connection::set_notification_capacity).
    pub fn notifications(&mut self) -> Vec<Notification> {
        self.notifications.queue.drain(..).collect()
    }

    /// Sets how many notifications are kept until taken (default 10,000; at least 1).
    ///
    /// When one arrives and the buffer is full, the oldest is dropped and the next one
    /// handed out reports it in [`Notification::missed_before`]: a listener that falls
    /// behind learns how many it missed, in order, instead of the connection's memory
    /// growing without limit (a payload is at most 8000 bytes by default, so the default
    /// holds at most about 80 MB).
    pub fn set_notification_capacity(&mut self, capacity: usize) {
        self.notifications.set_capacity(capacity);
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
/// Dropping a [`recv`](Listener::recv) future loses no notification. A listener that falls
/// behind by more than the connection's
/// [notification capacity](Connection::set_notification_capacity) sees the gap in
/// [`Notification::missed_before`].
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

#[cfg(test)]
mod tests {
    use super::*;

    fn note(i: u32) -> Notification {
        Notification {
            process_id: 1,
            channel: "c".to_owned(),
            payload: i.to_string(),
            missed_before: 0,
        }
    }

    fn taken(q: &mut Queue) -> Vec<(String, u64)> {
        std::iter::from_fn(|| q.pop_front())
            .map(|n| (n.payload, n.missed_before))
            .collect()
    }

    #[test]
    fn a_full_queue_drops_the_oldest_and_counts_them() {
        let mut q = Queue::default();
        q.set_capacity(3);
        for i in 0..10 {
            q.push(note(i));
        }
        let expected = [("7", 7), ("8", 0), ("9", 0)].map(|(p, m)| (p.to_owned(), m));
        assert_eq!(taken(&mut q), expected);
        // Capacity 1 (0 is taken as 1): each notification counts those dropped before it.
        q.set_capacity(0);
        for i in 0..5 {
            q.push(note(i));
        }
        assert_eq!(taken(&mut q), [("4".to_owned(), 4)]);
    }

    #[test]
    fn shrinking_drops_the_oldest() {
        let mut q = Queue::default();
        for i in 0..5 {
            q.push(note(i));
        }
        q.set_capacity(2);
        let expected = [("3", 3), ("4", 0)].map(|(p, m)| (p.to_owned(), m));
        assert_eq!(taken(&mut q), expected);
        assert_eq!(q.capacity, 2);
        assert_eq!(Queue::default().capacity, DEFAULT_CAPACITY);
    }
}
