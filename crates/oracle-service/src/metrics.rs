//! Counters for `GET /metrics`, in Prometheus's text format: jobs by
//! verdict, cache hits, refused requests by code, stage times, and (read
//! from the store when scraped) the queue's depth and running jobs.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;

/// The service's counters.
#[derive(Default)]
pub struct Metrics {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    jobs: BTreeMap<String, u64>,
    cache_hits: u64,
    refused: BTreeMap<String, u64>,
    /// Per stage: (seconds summed, count).
    stages: BTreeMap<String, (f64, u64)>,
    /// Per job: seconds from claim to report, summed, and count.
    job_seconds: (f64, u64),
}

impl Metrics {
    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A job finished with `verdict` after `seconds`, from the cache or
    /// not, with these stage times (milliseconds).
    pub fn job_done(&self, verdict: &str, cached: bool, seconds: f64, stages: &[(String, f64)]) {
        let mut m = self.inner();
        *m.jobs.entry(verdict.to_owned()).or_default() += 1;
        m.cache_hits += u64::from(cached);
        m.job_seconds.0 += seconds;
        m.job_seconds.1 += 1;
        if !cached {
            for (name, millis) in stages {
                let e = m.stages.entry(name.clone()).or_default();
                e.0 += millis / 1e3;
                e.1 += 1;
            }
        }
    }

    /// A request was refused with `code`.
    pub fn refused(&self, code: &str) {
        *self.inner().refused.entry(code.to_owned()).or_default() += 1;
    }

    /// The text for a scrape, with the store's gauges.
    pub fn render(&self, queued: u64, running: u64) -> String {
        let m = self.inner();
        let mut s = String::new();
        let _ = writeln!(s, "# HELP oracle_jobs_total Jobs finished, by verdict.");
        let _ = writeln!(s, "# TYPE oracle_jobs_total counter");
        for (v, n) in &m.jobs {
            let _ = writeln!(s, "oracle_jobs_total{{verdict=\"{v}\"}} {n}");
        }
        let _ = writeln!(
            s,
            "# HELP oracle_cache_hits_total Jobs answered from the result cache."
        );
        let _ = writeln!(s, "# TYPE oracle_cache_hits_total counter");
        let _ = writeln!(s, "oracle_cache_hits_total {}", m.cache_hits);
        let _ = writeln!(
            s,
            "# HELP oracle_requests_refused_total Requests refused, by error code."
        );
        let _ = writeln!(s, "# TYPE oracle_requests_refused_total counter");
        for (c, n) in &m.refused {
            let _ = writeln!(s, "oracle_requests_refused_total{{code=\"{c}\"}} {n}");
        }
        let _ = writeln!(s, "# HELP oracle_queue_depth Jobs waiting for a worker.");
        let _ = writeln!(s, "# TYPE oracle_queue_depth gauge");
        let _ = writeln!(s, "oracle_queue_depth {queued}");
        let _ = writeln!(s, "# HELP oracle_jobs_running Jobs a worker is running.");
        let _ = writeln!(s, "# TYPE oracle_jobs_running gauge");
        let _ = writeln!(s, "oracle_jobs_running {running}");
        let _ = writeln!(s, "# HELP oracle_job_seconds Time from claim to report.");
        let _ = writeln!(s, "# TYPE oracle_job_seconds summary");
        let _ = writeln!(s, "oracle_job_seconds_sum {}", m.job_seconds.0);
        let _ = writeln!(s, "oracle_job_seconds_count {}", m.job_seconds.1);
        let _ = writeln!(
            s,
            "# HELP oracle_stage_seconds Pipeline stage times of jobs that ran."
        );
        let _ = writeln!(s, "# TYPE oracle_stage_seconds summary");
        for (name, (sum, count)) in &m.stages {
            let _ = writeln!(s, "oracle_stage_seconds_sum{{stage=\"{name}\"}} {sum}");
            let _ = writeln!(s, "oracle_stage_seconds_count{{stage=\"{name}\"}} {count}");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_render_as_prometheus_text() {
        let m = Metrics::default();
        m.job_done("pass", false, 2.0, &[("host".into(), 500.0)]);
        m.job_done("pass", true, 0.01, &[("host".into(), 500.0)]);
        m.refused("unauthorized");
        let t = m.render(3, 1);
        assert!(t.contains("oracle_jobs_total{verdict=\"pass\"} 2\n"), "{t}");
        assert!(t.contains("oracle_cache_hits_total 1\n"), "{t}");
        assert!(
            t.contains("oracle_requests_refused_total{code=\"unauthorized\"} 1\n"),
            "{t}"
        );
        assert!(t.contains("oracle_queue_depth 3\n"), "{t}");
        // A cached job ran no stage.
        assert!(
            t.contains("oracle_stage_seconds_count{stage=\"host\"} 1\n"),
            "{t}"
        );
    }
}
