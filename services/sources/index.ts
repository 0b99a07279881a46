/**
 * Event sources the destinations area configures: RSS feeds (rss.ts, parsed by feeds.ts).
 * New items go through the webhook outbox and run with trigger `rss`.
 */
export { type FeedItem, parseFeed } from './feeds';
export { type PollResult, pollRssSource, type RssState } from './rss';
export { CI_MAX_BUILDS_PER_POLL, type CiPollDeps, pollCiSource } from './ci';
