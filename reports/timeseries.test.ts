import { describe, expect, it } from 'vitest';
import { fixtureSeconds } from './test/fixtures.js';
import { formatTimeseriesCsv, orderReasons, parseTimeseriesCsv } from './timeseries.js';

describe('timeseries.csv', () => {
  it('flattens scalars, then decisions_<reason>, then ep_<id>_running/waiting/kv_usage', () => {
    const header = formatTimeseriesCsv(fixtureSeconds(2)).split('\n')[0];
    expect(header).toBe(
      't_s,inflight,queued,limit,configured_limit,queue_depth,adapt_state,arrivals,completed,good,' +
        'ttft_p50_ms,ttft_p95_ms,e2e_p50_ms,e2e_p95_ms,' +
        'decisions_admitted,decisions_capacity_shed,decisions_queued,decisions_queue_timeout,' +
        'ep_ep-a_running,ep_ep-a_waiting,ep_ep-a_kv_usage,ep_ep-b_running,ep_ep-b_waiting,ep_ep-b_kv_usage,' +
        'inflight_max,queued_max',
    );
  });

  it('reads a file without the per-second maxima, the end-of-second readings standing in', () => {
    const text = formatTimeseriesCsv(fixtureSeconds(10));
    const lines = text.split('\n').map((l) => l.split(',').slice(0, -2).join(','));
    const back = parseTimeseriesCsv(lines.join('\n'));
    expect(back[7]?.inflight_max).toBe(back[7]?.inflight);
    expect(back[7]?.queued_max).toBe(back[7]?.queued);
  });

  it('reads back exactly the rows it wrote, blanks as empty latencies', () => {
    const rows = fixtureSeconds(30);
    const back = parseTimeseriesCsv(formatTimeseriesCsv(rows));
    expect(back).toEqual(rows);
    expect(back[0]?.ttft_p95_ms).toBe('');
  });

  it('keeps endpoint ids that contain commas and underscores', () => {
    const rows = fixtureSeconds(1).map((r) => ({
      ...r,
      endpoints: [{ id: '10.0.0.1:8000,pool_a', running: 3, waiting: 1, kv_usage: 0.5 }],
    }));
    expect(parseTimeseriesCsv(formatTimeseriesCsv(rows))[0]?.endpoints).toEqual(rows[0]?.endpoints);
  });

  it('names a missing required column', () => {
    expect(() => parseTimeseriesCsv('t_s,inflight\n0,1\n')).toThrow(/no column "queued"/);
  });

  it('names the column and line of a value that is not a number', () => {
    const text = formatTimeseriesCsv(fixtureSeconds(3)).replace(/\n1,/, '\nx,');
    expect(() => parseTimeseriesCsv(text)).toThrow(/line 3: t_s: "x" is not a number/);
  });

  it('orders reasons as the decisions counter does, unknown ones last by name', () => {
    expect(orderReasons(['zeta', 'queued', 'admitted', 'alpha', 'capacity_shed'])).toEqual([
      'admitted',
      'capacity_shed',
      'queued',
      'alpha',
      'zeta',
    ]);
  });
});
