import { describe, expect, it } from 'vitest';
import { cliffFindings, runFindings, sweepRecommendationSections } from './findings.js';
import { fixtureCliff, fixtureSummary, fixtureSweep } from './test/fixtures.js';

describe('run findings', () => {
  it('says how much completed work was not good, what was refused and which bound bound', () => {
    const f = runFindings(fixtureSummary());
    expect(f[0]).toBe(
      '1.46 rps of completions (11.5% of throughput) finished but were not good: late for their TTFT SLO or deadline. That capacity was spent on work nobody could use.',
    );
    expect(f).toContain(
      'The gate refused 14.5% of attempts (429 admission_capacity 160, 504 admission_queue_timeout 40).',
    );
    expect(f).toContain('In-flight requests reached the ceiling (16): the ceiling bound during the run.');
  });

  it('puts a conservation failure first and names the worst-served tenant when fairness is low', () => {
    const s = { ...fixtureSummary(), conservation_ok: false, jain_fairness: 0.7 };
    const f = runFindings(s);
    expect(f[0]).toMatch(/^Conservation failed/);
    expect(f.some((x) => x.includes('tenant "<script>x</script>" had only 40.0%'))).toBe(true);
  });

  it('says so when nothing was lost', () => {
    const s = {
      ...fixtureSummary(),
      goodput_rps: 10,
      throughput_rps: 10,
      shed_rate: 0,
      max_inflight: 3,
      max_queued: 0,
      decisions: { admitted: 10 },
      wasted_tokens: 0,
      retry_amplification: 1,
    };
    expect(runFindings(s)).toEqual(['Every offered request was good; nothing was refused.']);
  });
});

describe('sweep recommendation', () => {
  it('gives the headline, the point and the rule as JSON', () => {
    const [text, rule] = sweepRecommendationSections(fixtureSweep());
    expect(text).toMatchObject({ kind: 'text', title: 'Recommendation' });
    expect(text?.kind === 'text' && text.bullets?.[0]).toBe(
      'Recommended point: fc_max_outstanding=32, fc_max_queue_depth=16.',
    );
    expect(rule).toMatchObject({ kind: 'code', language: 'json' });
    expect(JSON.parse(rule?.kind === 'code' ? rule.text : '')).toEqual(fixtureSweep().recommendation.rule);
  });

  it('names the binding constraint when no point is feasible', () => {
    const sweep = fixtureSweep();
    const none = {
      ...sweep,
      recommendation: { feasible: false, headline: 'No point meets every SLO', binding: 'ttft_p95_ms<=2000' },
    };
    const [text] = sweepRecommendationSections(none);
    expect(JSON.stringify(text)).toContain('the binding constraint is ttft_p95_ms<=2000');
  });
});

describe('cliff findings', () => {
  it('says whether goodput plateaus or collapses per mode', () => {
    const f = cliffFindings(fixtureCliff());
    expect(f[0]).toBe(
      'gate off: goodput peaks at 20.00 rps (offered 40.00 rps) and collapses: it falls to 10.00 rps at 80.00 rps offered (50% of the peak, below the 90% a plateau keeps; shed rate 0.0%).',
    );
    expect(f[2]).toMatch(
      /^enforce: .* plateaus: it holds at 19\.50 rps at 80\.00 rps offered \(100% of the peak, at least the 90% a plateau keeps; shed rate 75\.0%\)/,
    );
  });
});
