// Routes: the public model names, their strategy and targets; list, create, edit, delete.
import { entityScreen } from '../entity_view.js';

export default entityScreen({
  path: 'routes', collection: '/routes', nameKey: 'name', listKey: 'targets', modelKey: 'model',
  noun: 'route', Noun: 'Route', plural: 'routes', nameLabel: 'Name (the model name clients send)',
  modelLabel: 'Model', modelPlaceholder: 'upstream model name',
  blurb: 'Each route is a model name clients send, and the targets that serve it.',
});
