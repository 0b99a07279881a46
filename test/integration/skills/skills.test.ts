/**
 * Skills over real HTTP and PostgreSQL: CRUD with the spec's messages, visibility across two
 * users of one workspace and across workspaces (other workspace's ids: 404, nothing changed),
 * versions and `parentVersionId` lineage, the session publication moves (request, publish,
 * rollback, archive), attached files through the Files service, and progressive load with
 * every error code and usage counting.
 */
import { loadConfig } from '../../../services/kernel/config';
import { AuditLogSchema, SkillSchema } from '../../../db/entities';
import { loadSkills as loadSkillsService } from '../../../services/skills';
import { addUserWithKey, createWorkspace, signInCookie, useTestStack, type Enveloped, type WorkspaceFixture } from '../../kit';
import { filesConfig, remove as removeFile, uploadFile } from '../files/support';
import {
  createSkill,
  deleteSkill,
  getSkill,
  listSkills,
  loadSkills,
  memberWithSession,
  move,
  newSkill,
  patchSkill,
  S,
  type Skill,
  type SkillList,
  type SkillLoadAnswer,
} from './support';

let other: WorkspaceFixture;
/** The workspace owner's session (Owner role: may publish). */
let ownerCookie: string;
/** A second member of the workspace, with a key and a session (Member role: may not publish). */
let bob: Awaited<ReturnType<typeof memberWithSession>>;

const NOT_FOUND = { error: 'Skill not found.' };
const OWNER_ONLY = { error: 'Only the skill owner can edit this skill.' };
const PENDING = { error: 'This skill already has a version awaiting publication review.' };
const PUBLISHED_DELETE = { error: 'Published skills cannot be deleted. Roll back or archive the publication first.' };
const REQUIRED = { error: 'Skill name and instructions are required.' };
const BAD_SHAPE = { error: 'Invalid progressive skill load request.' };
let seq = 0;
const uniqueName = (base: string) => `${base}-${++seq}`;

const stack = useTestStack(async () => ({
  config: await filesConfig(loadConfig({}), { purgeDelayMs: 3_600_000 }),
  worker: false,
  workspaceName: 'Skills',
}));
beforeAll(async () => {
  other = await createWorkspace(stack.app, 'Other skills');
  ownerCookie = await signInCookie(stack.app, stack.ws.ownerEmail, stack.ws.ownerPassword, stack.ws.workspaceId);
  bob = await memberWithSession(stack.app, stack.ws, 'member');
});

async function row(id: string) {
  return stack.app.orm.em.fork().findOne(SkillSchema, { id });
}

describe('create', () => {
  test('201: a private draft version 1 owned by the key’s user, enabled by default', async () => {
    const name = uniqueName('summarize');
    const res = await createSkill(stack.app, stack.ws.token, {
      name,
      description: 'Summaries',
      instructions: 'Summarize the text in three bullets.',
    });
    expect(res.status).toBe(201);
    expect(res.body.skill).toEqual({
      id: expect.stringMatching(/^skill_[0-9a-f]{32}$/),
      workspaceId: stack.ws.workspaceId,
      ownerId: stack.ws.ownerId,
      name,
      description: 'Summaries',
      instructions: 'Summarize the text in three bullets.',
      enabled: true,
      visibility: 'private',
      publicationStatus: 'draft',
      version: 1,
      parentVersionId: null,
      fileIds: [],
      reviewerId: null,
      reviewRequestedAt: null,
      reviewedAt: null,
      publishedAt: null,
      usageCount: 0,
      lastUsedAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await getSkill(stack.app, stack.ws.token, res.body.skill.id)).body.skill).toEqual(res.body.skill);
  });

  test('400 `Skill name and instructions are required.` without name or instructions (and nothing is stored)', async () => {
    const before = await listSkills(stack.app, stack.ws.token);
    for (const body of [
      {},
      { name: 'x' },
      { instructions: 'do it' },
      { name: '   ', instructions: 'do it' },
      { name: 'x', instructions: '  \n ' },
      { content: '---\ndescription: only\n---\n' },
    ]) {
      const res = await createSkill(stack.app, stack.ws.token, body);
      expect({ body, status: res.status, error: res.body }).toEqual({ body, status: 400, error: REQUIRED });
    }
    expect(await listSkills(stack.app, stack.ws.token)).toEqual(before);
  });

  test('content: frontmatter name and description, the body as instructions; explicit fields win', async () => {
    const name = uniqueName('triage');
    const content = `---\nname: ${name}\ndescription: Triage incoming issues\n---\n# Triage\r\n\r\nLabel every issue.\n`;
    const skill = await newSkill(stack.app, stack.ws.token, { content });
    expect(skill).toMatchObject({ name, description: 'Triage incoming issues', instructions: '# Triage\n\nLabel every issue.' });
    const explicit = await newSkill(stack.app, stack.ws.token, {
      content: `---\nname: ${uniqueName('ignored')}\ndescription: d\n---\nBody`,
      name: uniqueName('explicit'),
      description: 'mine',
    });
    expect(explicit).toMatchObject({ description: 'mine', instructions: 'Body' });
    expect(explicit.name).toMatch(/^explicit-/);
  });

  test('content without a frontmatter name: the first heading, slugified', async () => {
    const heading = `Review Pull Requests ${++seq}!`;
    const skill = await newSkill(stack.app, stack.ws.token, { content: `Intro line\n\n## ${heading}\n\nCheck the tests first.` });
    expect(skill.name).toBe(`review-pull-requests-${seq}`);
    expect(skill.description).toBe('');
  });

  test('content with broken frontmatter: 400 naming the problem', async () => {
    const bad = await createSkill(stack.app, stack.ws.token, { content: '---\nname: [unclosed\n---\nBody' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^Skill content has invalid frontmatter: /);
    const notMapping = await createSkill(stack.app, stack.ws.token, { content: '---\n- a\n- b\n---\nBody' });
    expect(notMapping.body).toEqual({ error: 'Skill content frontmatter must be a mapping with name and description.' });
    const wrongType = await createSkill(stack.app, stack.ws.token, { content: '---\nname: [a, b]\n---\nBody' });
    expect(wrongType.body).toEqual({ error: 'Skill content frontmatter field name must be a string.' });
  });

  test('same owner and name (case-insensitive) as an active private draft updates that draft', async () => {
    const name = uniqueName('Release-Notes');
    const first = await newSkill(stack.app, stack.ws.token, { name, instructions: 'v1 text', description: 'keep me' });
    const again = await createSkill(stack.app, stack.ws.token, {
      name: name.toUpperCase(),
      instructions: 'v1 text, revised',
      enabled: false,
    });
    expect(again.status).toBe(201);
    expect(again.body.skill).toMatchObject({
      id: first.id,
      name,
      instructions: 'v1 text, revised',
      description: 'keep me',
      enabled: false,
      version: 1,
      publicationStatus: 'draft',
    });
    // Another user's skill of the same name is their own draft.
    const bobs = await newSkill(stack.app, bob.token, { name, instructions: 'bob text' });
    expect(bobs.id).not.toBe(first.id);
    expect(bobs.ownerId).toBe(bob.userId);
    expect((await getSkill(stack.app, stack.ws.token, first.id)).body.skill.instructions).toBe('v1 text, revised');
  });

  test('concurrent creates of one name by one owner make one draft', async () => {
    const name = uniqueName('race');
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => createSkill(stack.app, stack.ws.token, { name, instructions: `text ${i}` })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(201));
    expect(new Set(results.map((r) => r.body.skill.id)).size).toBe(1);
    expect((await listSkills(stack.app, stack.ws.token, name)).length).toBe(1);
  });

  test('bad bodies: 400 with a readable message; a viewer’s key may not create', async () => {
    expect((await createSkill(stack.app, stack.ws.token, { name: 'x', instructions: 'y', bogus: 1 })).status).toBe(400);
    expect((await createSkill(stack.app, stack.ws.token, { name: 5, instructions: 'y' })).body.error).toMatch(
      /^Invalid request body: name/,
    );
    expect((await createSkill(stack.app, stack.ws.token, { name: 'n'.repeat(121), instructions: 'y' })).body.error).toMatch(
      /name must be at most 120 characters/,
    );
    const viewer = await addUserWithKey(stack.app, stack.ws, 'viewer');
    expect((await createSkill(stack.app, viewer.token, { name: uniqueName('v'), instructions: 'y' })).status).toBe(403);
    const personal = await addUserWithKey(stack.app, stack.ws, 'member', 'personal');
    expect(await stack.as(personal.token).get<SkillList>(S)).toMatchObject({
      status: 403,
      body: { error: 'A workspace API key is required.' },
    });
    expect((await stack.as().get(S)).status).toBe(401);
  });
});

describe('list and query', () => {
  test('`?query=` is a case-insensitive substring of name, description or instructions; `%` and `_` are literal', async () => {
    const tag = `zq${Date.now().toString(36)}`;
    const byName = await newSkill(stack.app, stack.ws.token, { name: `${tag}-NAME`, instructions: 'plain' });
    const byDescription = await newSkill(stack.app, stack.ws.token, {
      name: uniqueName('d'),
      description: `About ${tag.toUpperCase()} things`,
      instructions: 'plain',
    });
    const byInstructions = await newSkill(stack.app, stack.ws.token, {
      name: uniqueName('i'),
      instructions: `Use ${tag} carefully, 100%_sure`,
    });
    await newSkill(stack.app, stack.ws.token, { name: uniqueName('unrelated'), instructions: 'nothing' });
    const ids = (await listSkills(stack.app, stack.ws.token, tag.toUpperCase())).map((s) => s.id).sort();
    expect(ids).toEqual([byName.id, byDescription.id, byInstructions.id].sort());
    expect((await listSkills(stack.app, stack.ws.token, '100%_sure')).map((s) => s.id)).toEqual([byInstructions.id]);
    expect(await listSkills(stack.app, stack.ws.token, '%_%_%_%')).toEqual([]);
  });
});

describe('visibility', () => {
  test('a private draft is visible to its owner only: another member gets 404 and changes nothing', async () => {
    const draft = await newSkill(stack.app, stack.ws.token, { name: uniqueName('private'), instructions: 'secret steps' });
    expect((await listSkills(stack.app, bob.token)).map((s) => s.id)).not.toContain(draft.id);
    expect(await getSkill(stack.app, bob.token, draft.id)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await patchSkill(stack.app, bob.token, draft.id, { instructions: 'hijacked' })).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await deleteSkill(stack.app, bob.token, draft.id)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await loadSkills(stack.app, bob.token, { skillIds: [draft.id] })).toMatchObject({
      status: 404,
      body: { code: 'PROGRESSIVE_SKILL_NOT_AVAILABLE' },
    });
    expect((await getSkill(stack.app, stack.ws.token, draft.id)).body.skill).toEqual(draft);
  });

  test('another workspace’s ids: 404 on every route, nothing changed', async () => {
    const mine = await newSkill(stack.app, stack.ws.token, { name: uniqueName('cross'), instructions: 'cross text' });
    const { id } = mine;
    expect(await getSkill(stack.app, other.token, id)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await patchSkill(stack.app, other.token, id, { description: 'x' })).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await deleteSkill(stack.app, other.token, id)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await loadSkills(stack.app, other.token, { skillIds: [id] })).toMatchObject({
      status: 404,
      body: { code: 'PROGRESSIVE_SKILL_NOT_AVAILABLE' },
    });
    expect(await loadSkills(stack.app, other.token, { skillName: mine.name })).toMatchObject({
      status: 404,
      body: { code: 'PROGRESSIVE_SKILL_NOT_AVAILABLE' },
    });
    expect((await listSkills(stack.app, other.token)).map((s) => s.id)).not.toContain(id);
    const otherCookie = await signInCookie(stack.app, other.ownerEmail, other.ownerPassword, other.workspaceId);
    for (const action of ['request-publication', 'publish', 'rollback', 'archive']) {
      expect(await move(stack.app, otherCookie, id, action)).toMatchObject({ status: 404, body: NOT_FOUND });
    }
    expect((await getSkill(stack.app, stack.ws.token, id)).body.skill).toEqual(mine);
    expect((await row(id))!.usageCount).toBe(0);
  });

  test('unknown and malformed ids: 404 and 400', async () => {
    expect(await getSkill(stack.app, stack.ws.token, 'skill_nope')).toMatchObject({ status: 404, body: NOT_FOUND });
    expect((await getSkill(stack.app, stack.ws.token, 'has%20space')).status).toBe(400);
  });
});

describe('update and delete', () => {
  test('the owner edits a draft in place (enabled, description, instructions); rename is refused', async () => {
    const draft = await newSkill(stack.app, stack.ws.token, { name: uniqueName('edit'), instructions: 'one' });
    const res = await patchSkill(stack.app, stack.ws.token, draft.id, { enabled: false, description: 'new d', instructions: 'two' });
    expect(res.status).toBe(200);
    expect(res.body.skill).toMatchObject({
      id: draft.id,
      version: 1,
      enabled: false,
      description: 'new d',
      instructions: 'two',
      publicationStatus: 'draft',
    });
    const rename = await patchSkill(stack.app, stack.ws.token, draft.id, { name: 'renamed' });
    expect(rename.status).toBe(400);
    expect(rename.body.error).toMatch(/name/);
    expect((await patchSkill(stack.app, stack.ws.token, draft.id, { instructions: '   ' })).body).toEqual(REQUIRED);
    expect((await getSkill(stack.app, stack.ws.token, draft.id)).body.skill).toMatchObject({ name: draft.name, instructions: 'two' });
  });

  test('the owner deletes a draft: `{ deleted: true }`, then 404', async () => {
    const draft = await newSkill(stack.app, stack.ws.token, { name: uniqueName('gone'), instructions: 'bye' });
    expect(await deleteSkill(stack.app, stack.ws.token, draft.id)).toMatchObject({ status: 200, body: { deleted: true } });
    expect(await getSkill(stack.app, stack.ws.token, draft.id)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await deleteSkill(stack.app, stack.ws.token, draft.id)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await row(draft.id)).toBeNull();
  });
});

describe('versions and publication', () => {
  test('request → pending; update of pending archives it for a new draft version; publish; edits of a published skill; rollback; archive', async () => {
    const name = uniqueName('deploy-guide');
    const v1 = await newSkill(stack.app, stack.ws.token, { name, description: 'Deploy', instructions: 'Deploy v1' });

    // Only the owner requests review; a second request while pending is refused.
    const requested = await move(stack.app, ownerCookie, v1.id, 'request-publication');
    expect(requested.status).toBe(200);
    expect(requested.body.skill).toMatchObject({
      id: v1.id,
      publicationStatus: 'pending',
      visibility: 'private',
      reviewRequestedAt: expect.any(String),
    });
    expect(await move(stack.app, ownerCookie, v1.id, 'request-publication')).toMatchObject({ status: 409, body: PENDING });
    // Pending is still private to its owner.
    expect(await getSkill(stack.app, bob.token, v1.id)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect((await getSkill(stack.app, stack.ws.token, v1.id)).body.skill.publicationStatus).toBe('pending');

    // Updating a pending private skill archives it and creates a new private draft version.
    const v2res = await patchSkill(stack.app, stack.ws.token, v1.id, { instructions: 'Deploy v2' });
    expect(v2res.status).toBe(200);
    const v2 = v2res.body.skill;
    expect(v2).toMatchObject({
      name,
      description: 'Deploy',
      instructions: 'Deploy v2',
      version: 2,
      parentVersionId: v1.id,
      publicationStatus: 'draft',
      visibility: 'private',
      ownerId: stack.ws.ownerId,
    });
    expect(v2.id).not.toBe(v1.id);
    expect(await getSkill(stack.app, stack.ws.token, v1.id)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect((await row(v1.id))!.publicationStatus).toBe('archived');
    expect((await listSkills(stack.app, stack.ws.token)).map((s) => s.id)).not.toContain(v1.id);

    // Publish needs a pending version and an Admin or Owner.
    expect(await move(stack.app, ownerCookie, v2.id, 'publish')).toMatchObject({
      status: 409,
      body: { error: 'Only a skill awaiting publication review can be published.' },
    });
    expect((await move(stack.app, ownerCookie, v2.id, 'request-publication')).status).toBe(200);
    expect(await move(stack.app, bob.cookie, v2.id, 'publish')).toMatchObject({
      status: 403,
      body: { error: 'Admin or Owner role required.' },
    });
    const reviews = await stack.as().get<SkillList>('/api/skills/reviews', { cookie: ownerCookie });
    expect(reviews.body.skills.map((s) => s.id)).toContain(v2.id);
    expect(reviews.body.skills.every((s) => s.publicationStatus === 'pending' && s.workspaceId === stack.ws.workspaceId)).toBe(true);
    expect(await stack.as().get<SkillList>('/api/skills/reviews', { cookie: bob.cookie })).toMatchObject({
      status: 403,
      body: { error: 'Admin or Owner role required.' },
    });
    const otherCookie = await signInCookie(stack.app, other.ownerEmail, other.ownerPassword, other.workspaceId);
    expect((await stack.as().get<SkillList>('/api/skills/reviews', { cookie: otherCookie })).body.skills.map((s) => s.id)).not.toContain(
      v2.id,
    );
    const published = await move(stack.app, ownerCookie, v2.id, 'publish');
    expect(published.status).toBe(200);
    expect(published.body.skill).toMatchObject({
      id: v2.id,
      publicationStatus: 'published',
      visibility: 'workspace',
      reviewerId: stack.ws.ownerId,
      reviewedAt: expect.any(String),
      publishedAt: expect.any(String),
    });

    // The whole workspace sees it; only the owner edits or deletes; published cannot be deleted.
    expect((await listSkills(stack.app, bob.token)).map((s) => s.id)).toContain(v2.id);
    expect((await getSkill(stack.app, bob.token, v2.id)).status).toBe(200);
    expect(await patchSkill(stack.app, bob.token, v2.id, { instructions: 'bob was here' })).toMatchObject({
      status: 403,
      body: OWNER_ONLY,
    });
    expect(await deleteSkill(stack.app, bob.token, v2.id)).toMatchObject({ status: 403, body: OWNER_ONLY });
    expect(await deleteSkill(stack.app, stack.ws.token, v2.id)).toMatchObject({ status: 409, body: PUBLISHED_DELETE });
    expect(await move(stack.app, bob.cookie, v2.id, 'request-publication')).toMatchObject({
      status: 403,
      body: { error: 'Only the skill owner can request publication.' },
    });

    // `enabled` alone switches the published skill in place.
    expect((await patchSkill(stack.app, stack.ws.token, v2.id, { enabled: false })).body.skill).toMatchObject({
      id: v2.id,
      enabled: false,
      publicationStatus: 'published',
    });
    expect((await patchSkill(stack.app, stack.ws.token, v2.id, { enabled: true })).body.skill.enabled).toBe(true);

    // A content edit of the published skill makes a new private draft; the published one keeps serving.
    const v3 = (await patchSkill(stack.app, stack.ws.token, v2.id, { instructions: 'Deploy v3' })).body.skill;
    expect(v3).toMatchObject({
      version: 3,
      parentVersionId: v2.id,
      publicationStatus: 'draft',
      visibility: 'private',
      instructions: 'Deploy v3',
    });
    expect((await getSkill(stack.app, bob.token, v2.id)).body.skill.instructions).toBe('Deploy v2');
    expect(await getSkill(stack.app, bob.token, v3.id)).toMatchObject({ status: 404 });
    // A second edit of the published skill goes to that same draft.
    const v3b = (await patchSkill(stack.app, stack.ws.token, v2.id, { description: 'Deploy, revised' })).body.skill;
    expect(v3b).toMatchObject({ id: v3.id, version: 3, instructions: 'Deploy v3', description: 'Deploy, revised' });
    // While the draft awaits review, edits of the published skill are refused.
    expect((await move(stack.app, ownerCookie, v3.id, 'request-publication')).status).toBe(200);
    expect(await patchSkill(stack.app, stack.ws.token, v2.id, { instructions: 'Deploy v4' })).toMatchObject({ status: 409, body: PENDING });

    // Publishing v3 archives v2.
    expect((await move(stack.app, ownerCookie, v3.id, 'publish')).body.skill).toMatchObject({ id: v3.id, publicationStatus: 'published' });
    expect(await getSkill(stack.app, bob.token, v2.id)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect((await row(v2.id))!.publicationStatus).toBe('archived');

    // Rollback: v3 archived, v2 published again; no earlier version behind v2.
    expect(await move(stack.app, bob.cookie, v3.id, 'rollback')).toMatchObject({ status: 403 });
    const rolled = await move(stack.app, ownerCookie, v3.id, 'rollback');
    expect(rolled.status).toBe(200);
    expect(rolled.body.skill).toMatchObject({
      id: v2.id,
      version: 2,
      publicationStatus: 'published',
      visibility: 'workspace',
      instructions: 'Deploy v2',
    });
    expect(await getSkill(stack.app, bob.token, v3.id)).toMatchObject({ status: 404 });
    expect((await listSkills(stack.app, bob.token)).filter((s) => s.name === name).map((s) => s.id)).toEqual([v2.id]);
    expect(await move(stack.app, ownerCookie, v2.id, 'rollback')).toMatchObject({
      status: 409,
      body: { error: 'This skill has no earlier published version to roll back to.' },
    });
    const audits = await stack.app.orm.em.fork().find(AuditLogSchema, { targetId: { $in: [v2.id, v3.id] } });
    expect(audits.map((a) => [a.action, a.targetId, a.actorUserId])).toEqual(
      expect.arrayContaining([
        ['skill.request_publication', v2.id, stack.ws.ownerId],
        ['skill.publish', v2.id, stack.ws.ownerId],
        ['skill.request_publication', v3.id, stack.ws.ownerId],
        ['skill.publish', v3.id, stack.ws.ownerId],
        ['skill.rollback', v2.id, stack.ws.ownerId],
      ]),
    );
    expect(audits).toHaveLength(5);

    // A new version after the rollback continues the numbering.
    const v4 = (await patchSkill(stack.app, stack.ws.token, v2.id, { instructions: 'Deploy v4' })).body.skill;
    expect(v4).toMatchObject({ version: 4, parentVersionId: v2.id });
    expect((await deleteSkill(stack.app, stack.ws.token, v4.id)).body).toEqual({ deleted: true });

    // Archive the publication: it leaves the workspace; then nothing is left to delete.
    expect(await move(stack.app, bob.cookie, v2.id, 'archive')).toMatchObject({ status: 403 });
    expect((await move(stack.app, ownerCookie, v2.id, 'archive')).body.skill).toMatchObject({ id: v2.id, publicationStatus: 'archived' });
    expect((await listSkills(stack.app, stack.ws.token)).filter((s) => s.name === name)).toEqual([]);
    expect(await deleteSkill(stack.app, stack.ws.token, v2.id)).toMatchObject({ status: 404, body: NOT_FOUND });
  });

  test('create with the name of the owner’s pending skill archives it for a new draft version; of a published one, a new draft version', async () => {
    const name = uniqueName('pending-by-create');
    const v1 = await newSkill(stack.app, stack.ws.token, { name, instructions: 'first' });
    await move(stack.app, ownerCookie, v1.id, 'request-publication');
    const v2 = await newSkill(stack.app, stack.ws.token, { name, instructions: 'second' });
    expect(v2).toMatchObject({ version: 2, parentVersionId: v1.id, publicationStatus: 'draft', instructions: 'second' });
    expect((await row(v1.id))!.publicationStatus).toBe('archived');
    await move(stack.app, ownerCookie, v2.id, 'request-publication');
    await move(stack.app, ownerCookie, v2.id, 'publish');
    const v3 = await newSkill(stack.app, stack.ws.token, { name, content: `---\nname: ${name}\n---\nthird` });
    expect(v3).toMatchObject({ version: 3, parentVersionId: v2.id, publicationStatus: 'draft', instructions: 'third' });
    expect((await getSkill(stack.app, stack.ws.token, v2.id)).body.skill.publicationStatus).toBe('published');
  });

  test('a member publishes nothing; another member’s published name blocks a second published skill of that name', async () => {
    const name = uniqueName('shared-name');
    const mine = await newSkill(stack.app, stack.ws.token, { name, instructions: 'owner version' });
    await move(stack.app, ownerCookie, mine.id, 'request-publication');
    await move(stack.app, ownerCookie, mine.id, 'publish');
    const bobs = await newSkill(stack.app, bob.token, { name, instructions: 'bob version' });
    expect((await move(stack.app, bob.cookie, bobs.id, 'request-publication')).body.skill.publicationStatus).toBe('pending');
    expect(await move(stack.app, ownerCookie, bobs.id, 'publish')).toMatchObject({
      status: 409,
      body: { error: `Another published skill of this workspace is named ${name}.` },
    });
    expect((await getSkill(stack.app, bob.token, bobs.id)).body.skill.publicationStatus).toBe('pending');
    // The owner of the skill requests review, not another member.
    const ownersDraft = await newSkill(stack.app, stack.ws.token, { name: uniqueName('owner-draft'), instructions: 'x' });
    expect(await move(stack.app, bob.cookie, ownersDraft.id, 'request-publication')).toMatchObject({ status: 404, body: NOT_FOUND });
  });
});

describe('session routes and the document', () => {
  test('publication moves need a session (a bearer key is not one) and refuse cross-origin posts', async () => {
    const draft = await newSkill(stack.app, stack.ws.token, { name: uniqueName('session-only'), instructions: 'x' });
    for (const action of ['request-publication', 'publish', 'rollback', 'archive']) {
      expect(await stack.api.post(`/api/skills/${draft.id}/${action}`)).toMatchObject({
        status: 401,
        body: { error: 'Sign-in is required.' },
      });
    }
    const crossOrigin = await stack
      .as()
      .post(`/api/skills/${draft.id}/request-publication`, undefined, { cookie: ownerCookie, headers: { origin: 'https://evil.example' } });
    expect(crossOrigin).toMatchObject({ status: 403, body: { error: 'Cross-origin request refused.' } });
    expect((await getSkill(stack.app, stack.ws.token, draft.id)).body.skill.publicationStatus).toBe('draft');
  });

  test('the OpenAPI document lists every skills route', async () => {
    const doc = (await stack.as().get<{ paths: Record<string, Record<string, unknown>> }>('/api/v1/openapi.json')).body;
    expect(Object.keys(doc.paths['/api/v1/skills'])).toEqual(expect.arrayContaining(['get', 'post']));
    expect(Object.keys(doc.paths['/api/v1/skills/{id}'])).toEqual(expect.arrayContaining(['get', 'patch', 'delete']));
    expect(doc.paths['/api/skills/reviews'].get).toBeDefined();
    for (const p of [
      '/api/v1/skills/load',
      '/api/skills/{id}/request-publication',
      '/api/skills/{id}/publish',
      '/api/skills/{id}/rollback',
      '/api/skills/{id}/archive',
    ]) {
      expect(doc.paths[p]?.post).toBeDefined();
    }
  });
});

describe('files', () => {
  test('ready files of the workspace attach; others are refused', async () => {
    const ready = await uploadFile(stack.app, { token: stack.ws.token }, Buffer.from('checklist'), {
      name: 'checklist.md',
      mimeType: 'text/markdown',
    });
    expect(ready.status).toBe('ready');
    const skill = await newSkill(stack.app, stack.ws.token, {
      name: uniqueName('with-file'),
      instructions: 'Use the checklist.',
      fileIds: [ready.id, ready.id],
    });
    expect(skill.fileIds).toEqual([ready.id]);
    const pending = await stack.api.post<Enveloped<{ file: { id: string } }>>(
      '/api/v1/files',
      { name: 'p.txt', mimeType: 'text/plain', sizeBytes: 3 },
      { headers: { 'idempotency-key': `k-${++seq}` } },
    );
    const theirs = await uploadFile(stack.app, { token: other.token }, Buffer.from('theirs'));
    for (const id of [pending.body.data.file.id, theirs.id, 'missing-file']) {
      expect(await patchSkill(stack.app, stack.ws.token, skill.id, { fileIds: [id] })).toMatchObject({
        status: 400,
        body: { error: `File ${id} is not a ready file of this workspace.` },
      });
    }
    expect((await getSkill(stack.app, stack.ws.token, skill.id)).body.skill.fileIds).toEqual([ready.id]);
    const second = await uploadFile(stack.app, { token: stack.ws.token }, Buffer.from('second'), {
      name: 'second.txt',
      mimeType: 'text/plain',
    });
    expect((await patchSkill(stack.app, stack.ws.token, skill.id, { fileIds: [second.id, ready.id] })).body.skill).toMatchObject({
      id: skill.id,
      version: 1,
      fileIds: [second.id, ready.id],
    });
    expect((await loadSkills(stack.app, stack.ws.token, { skillIds: [skill.id] })).body.skills[0].files.map((f) => f.name)).toEqual([
      'second.txt',
      'checklist.md',
    ]);
    expect((await patchSkill(stack.app, stack.ws.token, skill.id, { fileIds: [] })).body.skill.fileIds).toEqual([]);
    const tooMany = await patchSkill(stack.app, stack.ws.token, skill.id, { fileIds: Array.from({ length: 21 }, (_, i) => `f${i}`) });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toMatch(/at most 20 files/);
  });
});

describe('POST /skills/load', () => {
  let alpha: Skill;
  let beta: Skill;
  let file: Awaited<ReturnType<typeof uploadFile>>;

  beforeAll(async () => {
    file = await uploadFile(stack.app, { token: stack.ws.token }, Buffer.from('# Style guide\n'), {
      name: 'style.md',
      mimeType: 'text/markdown',
    });
    alpha = await newSkill(stack.app, stack.ws.token, {
      name: uniqueName('alpha'),
      description: 'A',
      instructions: 'Alpha steps',
      fileIds: [file.id],
    });
    beta = await newSkill(stack.app, stack.ws.token, { name: uniqueName('beta'), description: 'B', instructions: 'Beta steps' });
  });

  test('200 by ids in request order, duplicates skipped, with files and `Cache-Control: private, no-store`', async () => {
    const res = await loadSkills(stack.app, stack.ws.token, { skillIds: [beta.id, alpha.id, beta.id] });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect(res.body).toEqual({
      capability: 'skills.load',
      effect: 'read-only',
      skills: [
        {
          id: beta.id,
          workspaceId: stack.ws.workspaceId,
          name: beta.name,
          description: 'B',
          instructions: 'Beta steps',
          version: 1,
          files: [],
        },
        {
          id: alpha.id,
          workspaceId: stack.ws.workspaceId,
          name: alpha.name,
          description: 'A',
          instructions: 'Alpha steps',
          version: 1,
          files: [
            { id: file.id, name: 'style.md', mimeType: 'text/markdown', sizeBytes: file.sizeBytes, sha256: file.sha256, status: 'ready' },
          ],
        },
      ],
      compatibility: { usedLegacyFields: [] },
    });
  });

  test('legacy skillId and version are reported; skillName is used only when no id selector remains', async () => {
    const legacy = await loadSkills(stack.app, stack.ws.token, { skillId: alpha.id, version: 1 });
    expect(legacy.status).toBe(200);
    expect(legacy.body.skills.map((s) => s.id)).toEqual([alpha.id]);
    expect(legacy.body.compatibility).toEqual({ usedLegacyFields: ['skillId', 'version'] });
    const both = await loadSkills(stack.app, stack.ws.token, { skillIds: [beta.id], skillId: beta.id, skillName: alpha.name });
    expect(both.body.skills.map((s) => s.id)).toEqual([beta.id]);
    expect(both.body.compatibility.usedLegacyFields).toEqual(['skillId']);
    const byName = await loadSkills(stack.app, stack.ws.token, { skillIds: [], skillName: alpha.name.toUpperCase(), versions: {} });
    expect(byName.body.skills.map((s) => s.id)).toEqual([alpha.id]);
    const byNameVersion = await loadSkills(stack.app, stack.ws.token, { skillName: alpha.name, version: 2 });
    expect(byNameVersion).toMatchObject({ status: 409, body: { code: 'PROGRESSIVE_SKILL_VERSION_MISMATCH' } });
  });

  test('by name, the workspace’s published skill wins over the caller’s own draft of that name', async () => {
    const name = uniqueName('by-name');
    const published = await newSkill(stack.app, bob.token, { name, instructions: 'published text' });
    await move(stack.app, bob.cookie, published.id, 'request-publication');
    await move(stack.app, ownerCookie, published.id, 'publish');
    const draft = await newSkill(stack.app, stack.ws.token, { name, instructions: 'draft text' });
    expect((await loadSkills(stack.app, stack.ws.token, { skillName: name })).body.skills.map((s) => s.id)).toEqual([published.id]);
    expect((await loadSkills(stack.app, stack.ws.token, { skillIds: [draft.id] })).body.skills[0].instructions).toBe('draft text');
    expect((await loadSkills(stack.app, bob.token, { skillIds: [published.id] })).status).toBe(200);
  });

  test('409 PROGRESSIVE_SKILL_VERSION_MISMATCH when versions or the legacy version differ', async () => {
    const byMap = await loadSkills(stack.app, stack.ws.token, { skillIds: [alpha.id, beta.id], versions: { [beta.id]: 3 } });
    expect(byMap).toMatchObject({
      status: 409,
      body: { error: `Skill ${beta.id} is at version 1, not version 3.`, code: 'PROGRESSIVE_SKILL_VERSION_MISMATCH' },
    });
    expect(byMap.headers.get('cache-control')).toBe('private, no-store');
    expect(await loadSkills(stack.app, stack.ws.token, { skillId: alpha.id, version: 2 })).toMatchObject({
      status: 409,
      body: { code: 'PROGRESSIVE_SKILL_VERSION_MISMATCH' },
    });
    expect((await loadSkills(stack.app, stack.ws.token, { skillIds: [alpha.id], versions: { [alpha.id]: 1 } })).status).toBe(200);
  });

  test('400 `Invalid progressive skill load request.` with no code for a body that is not a load request', async () => {
    const raw = (rawBody: string, contentType = 'application/json') =>
      stack.api.request<SkillLoadAnswer>('POST', `${S}/load`, { rawBody, headers: { 'content-type': contentType } });
    const cases = [
      await loadSkills(stack.app, stack.ws.token, { skillIds: [alpha.id], extra: true }),
      await loadSkills(stack.app, stack.ws.token, { skillIds: alpha.id }),
      await loadSkills(stack.app, stack.ws.token, { skillIds: [1] }),
      await loadSkills(stack.app, stack.ws.token, { skillId: 7 }),
      await loadSkills(stack.app, stack.ws.token, { versions: [1], skillId: alpha.id }),
      await loadSkills(stack.app, stack.ws.token, { version: '1', skillId: alpha.id }),
      await loadSkills(stack.app, stack.ws.token, [alpha.id]),
      await raw('{"skillIds": ['),
      await raw('null'),
      await raw(`skillId=${alpha.id}`, 'application/x-www-form-urlencoded'),
      await raw(JSON.stringify({ skillId: alpha.id }), 'text/plain'),
    ];
    for (const res of cases) {
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: BAD_SHAPE });
      expect(res.headers.get('cache-control')).toBe('private, no-store');
    }
  });

  test('400 PROGRESSIVE_SKILL_INVALID_REQUEST for broken rules', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'Name the skills to load with skillIds, skillId or skillName.'],
      [{ skillIds: [], skillName: '  ' }, 'Name the skills to load with skillIds, skillId or skillName.'],
      [{ skillIds: Array.from({ length: 33 }, (_, i) => `skill_${i}`) }, 'At most 32 skill ids can be loaded at once.'],
      [{ skillIds: ['x'.repeat(192)] }, 'Skill ids must be non-empty and at most 191 characters.'],
      [{ skillIds: [''] }, 'Skill ids must be non-empty and at most 191 characters.'],
      [{ skillId: ' ' }, 'Skill ids must be non-empty and at most 191 characters.'],
      [{ skillIds: [alpha.id], versions: { [alpha.id]: 0 } }, 'Skill versions must be positive integers.'],
      [{ skillIds: [alpha.id], versions: { [alpha.id]: 1.5 } }, 'Skill versions must be positive integers.'],
      [{ skillId: alpha.id, version: -1 }, 'Skill versions must be positive integers.'],
      [{ skillIds: [alpha.id], versions: { [beta.id]: 1 } }, `versions names skill ${beta.id}, which is not requested.`],
      [
        { skillIds: [alpha.id, beta.id], version: 1 },
        'The legacy version field needs exactly one requested skill; use versions for several.',
      ],
      [{ skillId: alpha.id, version: 1, versions: { [alpha.id]: 2 } }, `version and versions disagree about skill ${alpha.id}.`],
      [{ skillIds: ['a\u0000b'] }, 'Skill load request field skillIds.0 contains a NUL character (U+0000).'],
    ];
    for (const [body, error] of cases) {
      const res = await loadSkills(stack.app, stack.ws.token, body);
      expect({ body, status: res.status, error: res.body }).toEqual({
        body,
        status: 400,
        error: { error, code: 'PROGRESSIVE_SKILL_INVALID_REQUEST' },
      });
    }
    // 32 distinct ids are within the limit (and then not available), as are duplicates of one id.
    expect((await loadSkills(stack.app, stack.ws.token, { skillIds: Array.from({ length: 32 }, (_, i) => `skill_${i}`) })).body.code).toBe(
      'PROGRESSIVE_SKILL_NOT_AVAILABLE',
    );
    expect((await loadSkills(stack.app, stack.ws.token, { skillIds: ['y'.repeat(191)] })).body.code).toBe(
      'PROGRESSIVE_SKILL_NOT_AVAILABLE',
    );
  });

  test('404 PROGRESSIVE_SKILL_NOT_AVAILABLE: unknown, disabled, or with a file that is no longer ready; nothing is counted', async () => {
    const before = (await row(beta.id))!.usageCount;
    expect(await loadSkills(stack.app, stack.ws.token, { skillIds: [beta.id, 'skill_unknown'] })).toMatchObject({
      status: 404,
      body: { error: 'Skill skill_unknown is not available.', code: 'PROGRESSIVE_SKILL_NOT_AVAILABLE' },
    });
    expect(await loadSkills(stack.app, stack.ws.token, { skillName: 'no-such-skill' })).toMatchObject({
      status: 404,
      body: { code: 'PROGRESSIVE_SKILL_NOT_AVAILABLE' },
    });
    const disabled = await newSkill(stack.app, stack.ws.token, { name: uniqueName('disabled'), instructions: 'off', enabled: false });
    expect(await loadSkills(stack.app, stack.ws.token, { skillIds: [disabled.id] })).toMatchObject({
      status: 404,
      body: { code: 'PROGRESSIVE_SKILL_NOT_AVAILABLE' },
    });
    expect(await loadSkills(stack.app, stack.ws.token, { skillName: disabled.name })).toMatchObject({
      status: 404,
      body: { code: 'PROGRESSIVE_SKILL_NOT_AVAILABLE' },
    });
    const doomed = await uploadFile(stack.app, { token: stack.ws.token }, Buffer.from('soon gone'));
    const withDoomed = await newSkill(stack.app, stack.ws.token, {
      name: uniqueName('doomed'),
      instructions: 'uses a file',
      fileIds: [doomed.id],
    });
    expect((await loadSkills(stack.app, stack.ws.token, { skillIds: [withDoomed.id] })).status).toBe(200);
    expect((await removeFile(stack.app, { token: stack.ws.token }, doomed.id)).status).toBe(202);
    expect(await loadSkills(stack.app, stack.ws.token, { skillIds: [beta.id, withDoomed.id] })).toMatchObject({
      status: 404,
      body: { error: `A file of skill ${withDoomed.id} is not available.`, code: 'PROGRESSIVE_SKILL_NOT_AVAILABLE' },
    });
    expect((await row(beta.id))!.usageCount).toBe(before);
  });

  test('workspace key only', async () => {
    const personal = await addUserWithKey(stack.app, stack.ws, 'member', 'personal');
    expect(await loadSkills(stack.app, personal.token, { skillIds: [alpha.id] })).toMatchObject({
      status: 403,
      body: { error: 'A workspace API key is required.' },
    });
    expect((await loadSkills(stack.app, '', { skillIds: [alpha.id] })).status).toBe(401);
  });

  test('each load counts one use of every loaded skill, concurrent loads included', async () => {
    const counted = await newSkill(stack.app, stack.ws.token, { name: uniqueName('counted'), instructions: 'count me' });
    const other = await newSkill(stack.app, stack.ws.token, { name: uniqueName('counted-too'), instructions: 'me too' });
    const results = await Promise.all(
      Array.from({ length: 12 }, () => loadSkills(stack.app, stack.ws.token, { skillIds: [counted.id, other.id, counted.id] })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(12).fill(200));
    await loadSkills(stack.app, stack.ws.token, { skillName: counted.name });
    const skill = (await getSkill(stack.app, stack.ws.token, counted.id)).body.skill;
    expect(skill.usageCount).toBe(13);
    expect(Date.parse(skill.lastUsedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(counted.createdAt));
    expect((await getSkill(stack.app, stack.ws.token, other.id)).body.skill.usageCount).toBe(12);
  });

  test('the service function other areas call answers the same as the route', async () => {
    const principal = {
      kind: 'api_key' as const,
      apiKeyId: stack.ws.keyId,
      principalId: `key:${stack.ws.keyId}`,
      userId: stack.ws.ownerId,
      scope: 'workspace' as const,
      workspaceId: stack.ws.workspaceId,
      role: 'owner' as const,
      organization: null,
      allowedWorkflowIds: null,
    };
    const result = await loadSkillsService(stack.app.orm.em.fork(), principal, { skillIds: [beta.id] });
    expect(result).toMatchObject({ capability: 'skills.load', effect: 'read-only', skills: [{ id: beta.id, instructions: 'Beta steps' }] });
    await expect(loadSkillsService(stack.app.orm.em.fork(), principal, { nope: 1 })).rejects.toMatchObject({
      kind: 'invalid',
      message: 'Invalid progressive skill load request.',
      code: undefined,
    });
    await expect(
      loadSkillsService(stack.app.orm.em.fork(), { ...principal, workspaceId: other.workspaceId }, { skillIds: [beta.id] }),
    ).rejects.toMatchObject({ kind: 'not_found', code: 'PROGRESSIVE_SKILL_NOT_AVAILABLE' });
  });
});
