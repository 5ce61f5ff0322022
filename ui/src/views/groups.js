// Provider groups: addresses of the form group/model spread over member providers; list,
// create, edit, delete.
import { entityScreen } from '../entity_view.js';

export default entityScreen({
  path: 'groups', collection: '/provider-groups', nameKey: 'slug', listKey: 'members', modelKey: 'upstream_model',
  noun: 'provider group', Noun: 'Provider group', plural: 'provider groups', nameLabel: 'Slug (clients address slug/model)',
  modelLabel: 'Upstream model', modelPlaceholder: 'as requested',
  blurb: 'A provider group answers slug/<model> over its members, forwarding the model as requested unless a member names one.',
});
