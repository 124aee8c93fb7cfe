// The release at a glance: what the namespace serves, entity counts by type, and providers by bridge count and role.
import { barChart } from './charts.ts';
import type { ViewContext } from './context.ts';
import { facts, h, numberFormat, section } from './dom.ts';

const TYPE_PREFIX = 'entities_';

export async function releaseView(ctx: ViewContext): Promise<HTMLElement> {
  const [meta, providers] = await Promise.all([ctx.client.meta(), ctx.providers()]);
  const { release, counts } = meta.data;
  const byType = Object.entries(counts)
    .filter(([k]) => k.startsWith(TYPE_PREFIX))
    .map(([k, v]) => ({ label: k.slice(TYPE_PREFIX.length), value: v }))
    .sort((a, b) => b.value - a.value || (a.label < b.label ? -1 : 1));
  const byBridges = providers
    .filter((p) => p.bridgeCount > 0)
    .map((p) => ({ label: p.name, value: p.bridgeCount, group: p.role }))
    .sort((a, b) => b.value - a.value || (a.label < b.label ? -1 : 1));
  const others = Object.entries(counts).filter(([k]) => !k.startsWith(TYPE_PREFIX));
  return h(
    'article',
    { class: 'release' },
    h('h1', {}, `Release ${release.stamp}`),
    section(
      'The release',
      facts([
        ['Namespace', meta.data.namespace],
        ['Stamp', h('code', {}, release.stamp)],
        ['Tier', release.tier],
        ['Publishable', release.publishable ? 'yes' : 'no'],
        ['Generated at', release.generated_at],
        ...others.map(([k, v]): [string, string] => [k.replaceAll('_', ' '), numberFormat.format(v)]),
      ]),
    ),
    section('Entities by type', byType.length ? barChart('Entities by type', byType, { valueName: 'entities' }) : h('p', {}, 'No entities.')),
    section('Providers by bridges', byBridges.length ? barChart('Providers by bridge count, with their role', byBridges, { valueName: 'bridges' }) : h('p', {}, 'No bridges.')),
  );
}
