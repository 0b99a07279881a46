/**
 * Event sources the destinations area configures: RSS feeds (rss.ts, parsed by feeds.ts).
 * New items go through the webhook outbox and run with trigger `rss`.
 */
export * from './feeds';
export * from './rss';
export * from './ci';
