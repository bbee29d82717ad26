//! The recording controller: a test controller, registered as `Recorded` in
//! `models::cc::CONTROLLERS`, that wraps the controller under test
//! (`Recorded((Log: 3, Inner: FixedRate((Rate: "100Gbps")))))`), forwards every hook to it, and
//! logs each call with the gate as the NIC handed it over. The suite reads what a controller was
//! told from the log, whatever the controller, so no controller has to count its own hooks.
//!
//! A scenario's RON cannot carry a handle, so the log is found by number in a process-wide
//! table: `Log::new` takes a fresh number, the controllers the NIC makes append their queue
//! pair's record under it, and `Log::take` collects them after the run.

use engine::SimTime;
use engine::scenario::FieldError;
use models::cc::{
    Acked, CONTROLLERS, CcChoice, CcModel, CongestionControl, EcnEcho, Feedback, Gate, IntEcho, Nak, QpInfo, Sent,
};
use models::int::Hops;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};

/// The name the recording controller is registered under.
pub const RECORDED: &str = "Recorded";

/// Registers the recording controller in `models::cc::CONTROLLERS` (once per process).
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| CONTROLLERS.register::<RecordedConfig>(RECORDED));
}

/// `Recorded((Log: 3, Inner: FixedRate(...)))`: record into log 3 the hooks the NIC calls on the
/// controller `Inner` (`None`: no controller, the gate stays open).
#[allow(non_snake_case)]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedConfig {
    /// The log's number (`Log::id`).
    pub Log: u64,
    /// The controller under test.
    pub Inner: CcChoice,
}

/// One hook the NIC called, with what it passed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Hook {
    /// `on_send`.
    Send(Sent),
    /// `on_ack`.
    Ack(Acked),
    /// `on_nak`.
    Nak(Nak),
    /// `on_cnp`.
    Cnp,
    /// `on_ecn_echo`.
    EcnEcho(EcnEcho),
    /// `on_int`: the ACK's PSN and the hop records it echoed.
    Int(u32, Hops),
    /// `on_timeout`.
    Timeout,
    /// `on_timer`.
    Timer,
}

/// One call: when, which hook, and the gate as it was before the controller changed it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Call {
    /// The hook's `now`.
    pub now: SimTime,
    /// The hook and its argument.
    pub hook: Hook,
    /// The gate the NIC handed the hook.
    pub gate: Gate,
}

/// One queue pair's controller: what it was made for and every call, in order.
#[derive(Clone, Debug)]
pub struct QpRecord {
    /// The queue pair, as the NIC described it to `new_qp`.
    pub qp: QpInfo,
    /// The gate `new_qp` left (the initial one).
    pub initial_gate: Gate,
    /// Every hook call, in the order the NIC made them.
    pub calls: Vec<Call>,
}

impl QpRecord {
    /// How many calls satisfy `f`.
    pub fn count(&self, f: impl Fn(&Hook) -> bool) -> u64 {
        self.calls.iter().filter(|c| f(&c.hook)).count() as u64
    }
}

type Shared = Arc<Mutex<QpRecord>>;

static LOGS: Mutex<BTreeMap<u64, Vec<Shared>>> = Mutex::new(BTreeMap::new());

/// A log the recording controllers of one run write to.
#[derive(Debug)]
pub struct Log(u64);

impl Log {
    /// A fresh, empty log.
    pub fn new() -> Log {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        lock(&LOGS).insert(id, Vec::new());
        Log(id)
    }
    /// Its number, for `RecordedConfig::Log`.
    pub fn id(&self) -> u64 {
        self.0
    }
    /// Every queue pair's record, in the order the NIC made the controllers.
    pub fn take(self) -> Vec<QpRecord> {
        let records = lock(&LOGS).remove(&self.0).unwrap_or_default();
        records.iter().map(|r| lock(r).clone()).collect()
    }
}

impl Default for Log {
    fn default() -> Self {
        Log::new()
    }
}

/// A poisoned lock only means another test panicked: its data is still what was recorded.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One queue pair's recording controller.
#[derive(Debug)]
pub struct Recording {
    record: Shared,
    inner: Option<Box<dyn CongestionControl>>,
}

impl Recording {
    /// The controller under test (`None` without one).
    pub fn inner(&self) -> Option<&dyn CongestionControl> {
        self.inner.as_deref()
    }

    /// Logs the call, then makes it on the controller under test.
    fn call(&mut self, now: SimTime, gate: &mut Gate, hook: Hook) {
        lock(&self.record).calls.push(Call { now, hook, gate: *gate });
        let Some(c) = &mut self.inner else { return };
        match hook {
            Hook::Send(sent) => c.on_send(now, gate, &sent),
            Hook::Ack(ack) => c.on_ack(now, gate, &ack),
            Hook::Nak(nak) => c.on_nak(now, gate, &nak),
            Hook::Cnp => c.on_cnp(now, gate),
            Hook::EcnEcho(echo) => c.on_ecn_echo(now, gate, &echo),
            Hook::Int(psn, hops) => c.on_int(
                now,
                gate,
                &IntEcho {
                    psn,
                    hops: hops.as_slice(),
                },
            ),
            Hook::Timeout => c.on_timeout(now, gate),
            Hook::Timer => c.on_timer(now, gate),
        }
    }
}

impl CongestionControl for Recording {
    fn on_send(&mut self, now: SimTime, gate: &mut Gate, sent: &Sent) {
        self.call(now, gate, Hook::Send(*sent));
    }
    fn on_ack(&mut self, now: SimTime, gate: &mut Gate, ack: &Acked) {
        self.call(now, gate, Hook::Ack(*ack));
    }
    fn on_nak(&mut self, now: SimTime, gate: &mut Gate, nak: &Nak) {
        self.call(now, gate, Hook::Nak(*nak));
    }
    fn on_cnp(&mut self, now: SimTime, gate: &mut Gate) {
        self.call(now, gate, Hook::Cnp);
    }
    fn on_ecn_echo(&mut self, now: SimTime, gate: &mut Gate, echo: &EcnEcho) {
        self.call(now, gate, Hook::EcnEcho(*echo));
    }
    fn on_int(&mut self, now: SimTime, gate: &mut Gate, echo: &IntEcho) {
        self.call(now, gate, Hook::Int(echo.psn, echo.hops.iter().collect()));
    }
    fn on_timeout(&mut self, now: SimTime, gate: &mut Gate) {
        self.call(now, gate, Hook::Timeout);
    }
    fn rate(&self) -> Option<engine::Rate> {
        self.inner.as_ref().and_then(|c| c.rate())
    }
    fn on_timer(&mut self, now: SimTime, gate: &mut Gate) {
        self.call(now, gate, Hook::Timer);
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl CcModel for RecordedConfig {
    fn validate(&self) -> Result<(), FieldError> {
        self.Inner.validate()
    }
    fn feedback(&self) -> Feedback {
        self.Inner.feedback()
    }
    fn new_qp(&self, qp: &QpInfo, gate: &mut Gate) -> Box<dyn CongestionControl> {
        let inner = self.Inner.model().map(|m| m.new_qp(qp, gate));
        let record = Arc::new(Mutex::new(QpRecord {
            qp: *qp,
            initial_gate: *gate,
            calls: Vec::new(),
        }));
        lock(&LOGS)
            .get_mut(&self.Log)
            .unwrap_or_else(|| panic!("no recording log {}: make it with Log::new", self.Log))
            .push(Arc::clone(&record));
        Box::new(Recording { record, inner })
    }
    fn clone_box(&self) -> Box<dyn CcModel> {
        Box::new(self.clone())
    }
}

impl engine::registry::Choice<dyn CcModel> for RecordedConfig {
    fn boxed(self) -> Box<dyn CcModel> {
        Box::new(self)
    }
}
