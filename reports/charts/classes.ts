/**
 * Workload-class charts: per class, where its attempts went (the policy's five dispositions) and
 * how many of its requests were useful on-time completions; and the same classes in two or more
 * runs side by side (a plain FIFO gate against a policy, `sluice report --compare`).
 */
import type { ClassSummary } from '../../sim/run/records.js';
import type { VegaLiteSpec } from '../types.js';
import { chartConfig, VL_SCHEMA } from './theme.js';

const DISPOSITION_ORDER = ['admit', 'queue', 'degrade', 'defer', 'reject'];
const DISPOSITION_COLORS = ['#2ca02c', '#1f77b4', '#bcbd22', '#9467bd', '#d62728'];

/** Per class, its attempts stacked by disposition (a policy run). */
export function dispositionChart(classes: readonly ClassSummary[], width = 480): VegaLiteSpec {
  const values = classes.flatMap((c) =>
    DISPOSITION_ORDER.map((d) => ({ class: c.class, disposition: d, attempts: c.dispositions[d] ?? 0 })),
  );
  return {
    $schema: VL_SCHEMA,
    title: {
      text: 'Dispositions per class',
      subtitle: "each class's attempts by the policy's one disposition of each",
    },
    config: chartConfig(),
    width,
    height: { step: 22 },
    data: { values },
    mark: { type: 'bar' },
    encoding: {
      y: { field: 'class', type: 'nominal', title: null, sort: classes.map((c) => c.class) },
      x: { field: 'attempts', type: 'quantitative', title: 'attempts', stack: 'zero' },
      color: {
        field: 'disposition',
        type: 'nominal',
        title: null,
        scale: { domain: DISPOSITION_ORDER, range: DISPOSITION_COLORS },
        legend: { orient: 'bottom' },
      },
      tooltip: [
        { field: 'class', type: 'nominal' },
        { field: 'disposition', type: 'nominal' },
        { field: 'attempts', type: 'quantitative' },
      ],
    },
  };
}

/** One run's classes, labelled, for {@link compareChart}. */
export interface LabelledClasses {
  label: string;
  classes: readonly ClassSummary[];
  /** All completions of the run (every class). */
  completed: number;
}

const MEASURES = ['useful on time', 'completed'];

/**
 * Per class, each run's useful on-time completions beside its completions (grouped bars, one
 * group per class and a last group for the whole run).
 */
export function compareChart(runs: readonly LabelledClasses[], width = 480): VegaLiteSpec {
  const classes: string[] = [];
  for (const r of runs) for (const c of r.classes) if (!classes.includes(c.class)) classes.push(c.class);
  const all = 'all classes';
  const values = runs.flatMap((r) => [
    ...classes.flatMap((name) => {
      const c = r.classes.find((x) => x.class === name);
      return [
        { class: name, run: r.label, measure: MEASURES[0], requests: c?.useful_on_time ?? 0 },
        { class: name, run: r.label, measure: MEASURES[1], requests: c?.completed ?? 0 },
      ];
    }),
    {
      class: all,
      run: r.label,
      measure: MEASURES[0],
      requests: r.classes.reduce((n, c) => n + c.useful_on_time, 0),
    },
    { class: all, run: r.label, measure: MEASURES[1], requests: r.completed },
  ]);
  return {
    $schema: VL_SCHEMA,
    title: {
      text: 'Useful on-time completions per class, side by side',
      subtitle: `${runs.map((r) => r.label).join(' vs ')}: completions while the client still waited and before the deadline, beside all completions`,
    },
    config: chartConfig(),
    data: { values },
    facet: { column: { field: 'measure', type: 'nominal', title: null, sort: MEASURES } },
    spec: {
      width: Math.round(width / 2),
      height: { step: 14 },
      mark: { type: 'bar' },
      encoding: {
        y: { field: 'class', type: 'nominal', title: null, sort: [...classes, all] },
        yOffset: { field: 'run', type: 'nominal', sort: runs.map((r) => r.label) },
        x: { field: 'requests', type: 'quantitative', title: 'requests' },
        color: {
          field: 'run',
          type: 'nominal',
          title: null,
          sort: runs.map((r) => r.label),
          scale: { range: ['#c7c7c7', '#2ca02c', '#1f77b4', '#ff7f0e'] },
          legend: { orient: 'bottom', labelLimit: 400 },
        },
        tooltip: [
          { field: 'run', type: 'nominal' },
          { field: 'class', type: 'nominal' },
          { field: 'measure', type: 'nominal' },
          { field: 'requests', type: 'quantitative' },
        ],
      },
    },
  };
}
