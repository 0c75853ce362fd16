//! The kernel's I/O priority of the calling thread (ioprio_set(2)), for
//! DiskSpd's `-I`. Threads started afterwards inherit it, so setting it on
//! the thread that starts a run's workers gives every worker the priority.
//! Only schedulers that honour priorities (BFQ; mq-deadline for the classes)
//! act on it; `none` ignores it.

use std::io;

/// An I/O priority: the idle class, or best effort at a level (0 highest, 7 lowest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoPriority {
    /// Served only when no other process needs the disk (`ionice -c3`).
    Idle,
    /// Best effort at a level 0..=7 (`ionice -c2 -nN`; 4 is the default).
    BestEffort(u8),
}

const IOPRIO_CLASS_SHIFT: u32 = 13;
const IOPRIO_CLASS_BE: u32 = 2;
const IOPRIO_CLASS_IDLE: u32 = 3;

impl IoPriority {
    /// The kernel's encoding: class in the top bits, level below.
    fn value(self) -> u32 {
        match self {
            IoPriority::Idle => IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT,
            IoPriority::BestEffort(level) => {
                (IOPRIO_CLASS_BE << IOPRIO_CLASS_SHIFT) | u32::from(level.min(7))
            }
        }
    }
}

/// Sets the calling thread's I/O priority; threads it starts later inherit it.
pub fn set_current_thread(p: IoPriority) -> io::Result<()> {
    crate::platform::process::set_io_priority(p.value())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_as_ionice_does() {
        assert_eq!(IoPriority::Idle.value(), 0x6000);
        assert_eq!(IoPriority::BestEffort(7).value(), 0x4007);
        assert_eq!(IoPriority::BestEffort(9).value(), 0x4007);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_thread_can_lower_its_own_priority() {
        std::thread::spawn(|| {
            set_current_thread(IoPriority::BestEffort(7)).unwrap();
            let got = crate::platform::process::io_priority().unwrap();
            assert_eq!(got, IoPriority::BestEffort(7).value());
        })
        .join()
        .unwrap();
    }
}
