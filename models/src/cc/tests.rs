use super::*;
use engine::SimTime;

#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Window {
    bytes: u64,
}

#[derive(Debug)]
struct WindowQp;

impl CongestionControl for WindowQp {
    fn on_send(&mut self, _now: SimTime, _gate: &mut Gate, _sent: &Sent) {}
    fn on_timer(&mut self, now: SimTime, gate: &mut Gate) {
        gate.wake_at = now;
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl CcModel for Window {
    fn validate(&self) -> Result<(), FieldError> {
        if self.bytes == 0 {
            return Err(FieldError::new("bytes", "must be more than 0"));
        }
        Ok(())
    }
    fn feedback(&self) -> Feedback {
        Feedback {
            cnp: true,
            ..Feedback::default()
        }
    }
    fn new_qp(&self, _qp: &QpInfo, gate: &mut Gate) -> Box<dyn CongestionControl> {
        gate.window = self.bytes;
        Box::new(WindowQp)
    }
    fn clone_box(&self) -> Box<dyn CcModel> {
        Box::new(self.clone())
    }
}

impl engine::registry::Choice<dyn CcModel> for Window {
    fn boxed(self) -> Box<dyn CcModel> {
        Box::new(self)
    }
}

#[derive(Debug, serde::Deserialize)]
#[allow(non_snake_case)]
struct Nic {
    #[serde(default)]
    CongestionControl: CcChoice,
}

fn qp() -> QpInfo {
    QpInfo {
        host: 0,
        qpn: 0,
        connection: 0,
        remote_host: 1,
        class: 0,
        port_rate: Rate::gbps(400),
    }
}

#[test]
fn none_is_the_default_and_a_bare_name() {
    CONTROLLERS.register::<Window>("TestWindow");
    let n: Nic = ron::from_str("()").unwrap();
    assert!(n.CongestionControl.model().is_none());
    let n: Nic = ron::from_str("(CongestionControl: None)").unwrap();
    assert_eq!(n.CongestionControl.name(), "None");
    assert_eq!(n.CongestionControl.feedback(), Feedback::default());
    let n: Nic = ron::from_str("(CongestionControl: TestWindow((bytes: 8)))").unwrap();
    assert_eq!(n.CongestionControl.name(), "TestWindow");
    assert!(n.CongestionControl.feedback().cnp);
    assert_eq!(n.CongestionControl.clone(), n.CongestionControl);
    let n: Nic = ron::from_str("(CongestionControl: TestWindow((bytes: 0)))").unwrap();
    assert_eq!(n.CongestionControl.validate().unwrap_err().field, "bytes");
    let e = ron::from_str::<Nic>("(CongestionControl: Dcqcn(()))")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("Dcqcn") && e.contains("`None`") && e.contains("TestWindow"),
        "{e}"
    );
    let e = ron::from_str::<Nic>("(CongestionControl: TestWindow((byte: 1)))")
        .unwrap_err()
        .to_string();
    assert!(e.contains("byte"), "{e}");
}

#[test]
fn the_gate_holds_back_by_time_and_by_window() {
    let mut cc = QpCc::new(&Window { bytes: 8000 }, &qp());
    assert_eq!(cc.gate.window, 8000);
    let t = SimTime::from_us(2);
    assert_eq!(cc.gate.wait(t, 7999), None);
    assert_eq!(cc.gate.wait(t, 8000), Some(SimTime::MAX));
    cc.gate.next_send = SimTime::from_us(3);
    assert_eq!(cc.gate.wait(t, 0), Some(SimTime::from_us(3)));
    assert_eq!(cc.gate.wait(SimTime::from_us(3), 0), None);
    assert_eq!(Gate::OPEN.wait(SimTime::ZERO, u64::MAX - 1), None);
}

#[test]
fn a_timer_left_in_the_past_is_cleared() {
    let mut cc = QpCc::new(&Window { bytes: 1 }, &qp());
    cc.on_timer(SimTime::from_us(5));
    assert_eq!(cc.gate.wake_at, SimTime::MAX);
}

#[test]
fn pacing_is_the_packet_at_the_rate() {
    let sent = Sent {
        at: SimTime::from_ns(10),
        psn: 3,
        bytes: 4154,
        payload: 4096,
        retransmit: false,
        in_flight: 4154,
    };
    // 4,154 x 8 bits at 100 Gbps: 80 ps per byte.
    assert_eq!(
        paced_next_send(Rate::gbps(100), &sent),
        SimTime::from_ns(10) + SimTime::from_ps(4154 * 80)
    );
}
