import { readFileSync } from 'node:fs';
import path from 'node:path';
import { devServerDynamicConfig } from '../../../scripts/lib/temporalDevServer';
import { renderDynamicConfigYaml, SERVER_DYNAMIC_CONFIG } from '../../../temporal/serverConfig';

describe('Temporal server settings', () => {
  it('production compose mounts the same dynamic config the dev server runs with', () => {
    const committed = readFileSync(path.join(__dirname, '../../../temporal/dynamicconfig.yaml'), 'utf8');
    expect(committed).toBe(renderDynamicConfigYaml());
    const compose = readFileSync(path.join(__dirname, '../../../docker-compose.yml'), 'utf8');
    expect(compose).toContain('./temporal/dynamicconfig.yaml:/etc/temporal/config/dynamicconfig/svc.yaml:ro');
    expect(compose).toContain('DYNAMIC_CONFIG_FILE_PATH: config/dynamicconfig/svc.yaml');
  });

  it('dev servers get the service settings unless a benchmark asks for the server defaults', () => {
    expect(devServerDynamicConfig()).toEqual(SERVER_DYNAMIC_CONFIG);
    expect(devServerDynamicConfig()['history.transferProcessorMaxPollRPS']).toBe(1000);
    expect(devServerDynamicConfig()['system.enableActivityEagerExecution']).toBe(true);
    expect(devServerDynamicConfig({ settings: 'server-defaults' })).toEqual({ 'frontend.enableServerVersionCheck': false });
    // Extra values win, except that the version check can never be turned back on.
    expect(
      devServerDynamicConfig({ dynamicConfig: { 'history.transferProcessorMaxPollRPS': 20, 'frontend.enableServerVersionCheck': true } }),
    ).toMatchObject({
      'history.transferProcessorMaxPollRPS': 20,
      'frontend.enableServerVersionCheck': false,
    });
  });
});
