/**
 * The SSRF rule on URLs and addresses. Nothing here opens a connection: the rule is a function of
 * the URL text and of the address, tested on literals.
 */
import { describe, expect, it } from 'vitest';
import {
  checkEndpointUrl,
  DestinationRefusedError,
  isAllowedAddress,
} from '#shared/webhooks/model/destination.ts';

/** Every class of address the issue names, with examples (IPv4-mapped forms of each IPv4 one). */
const REFUSED: Record<string, readonly string[]> = {
  loopback: ['127.0.0.1', '127.255.0.9', '::1', '::ffff:127.0.0.1'],
  'private (RFC 1918)': [
    '10.0.0.1',
    '172.16.5.4',
    '172.31.255.255',
    '192.168.1.1',
    '::ffff:10.0.0.1',
    '::ffff:192.168.0.1',
  ],
  'link-local': ['169.254.169.254', '169.254.0.1', 'fe80::1', '::ffff:169.254.169.254'],
  'CGNAT (100.64/10)': ['100.64.0.1', '100.127.255.254', '::ffff:100.64.0.1'],
  multicast: ['224.0.0.1', '239.255.255.250', 'ff02::1'],
  unspecified: ['0.0.0.0', '::', '::ffff:0.0.0.0'],
  'IPv6 unique-local': ['fc00::1', 'fd12:3456::1'],
  broadcast: ['255.255.255.255'],
  'IPv6 forms carrying an IPv4 address': ['64:ff9b::a00:1', '2002:a00:1::1', '2001::1'],
  reserved: ['192.0.2.1', '198.18.0.1', '240.0.0.1'],
  // IPv4-compatible IPv6 (::/96, RFC 4291 2.5.5.1, deprecated), which ipaddr.js calls unicast.
  'IPv4-compatible IPv6': ['::a9fe:a9fe', '::7f00:1', '::a00:1', '::8.8.8.8', '::127.0.0.1'],
};

describe('the addresses a webhook may reach', () => {
  for (const [range, addresses] of Object.entries(REFUSED)) {
    it.each(addresses)(`refuses ${range}: %s, deployed`, (address) => {
      expect(isAllowedAddress(address, 'deployed')).toBe(false);
    });
  }

  it.each(['8.8.8.8', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8'])(
    'allows the public %s',
    (address) => {
      expect(isAllowedAddress(address, 'deployed')).toBe(true);
      expect(isAllowedAddress(address, 'local')).toBe(true);
    },
  );

  it('allows loopback locally only, and nothing else private', () => {
    expect(isAllowedAddress('127.0.0.1', 'local')).toBe(true);
    expect(isAllowedAddress('::1', 'local')).toBe(true);
    for (const address of ['10.0.0.1', '169.254.169.254', '100.64.0.1', 'fd00::1', '0.0.0.0']) {
      expect(isAllowedAddress(address, 'local')).toBe(false);
    }
  });

  it('refuses what is no address at all', () => {
    expect(isAllowedAddress('example.com', 'deployed')).toBe(false);
  });
});

const refusal = (url: string, mode: 'deployed' | 'local') => {
  try {
    checkEndpointUrl(url, mode);
  } catch (error) {
    if (error instanceof DestinationRefusedError) return error.reason;
    throw error;
  }
  return undefined;
};

describe('the URL of an endpoint', () => {
  it('takes an https URL of a public name or address', () => {
    expect(refusal('https://merchant.example.com/hooks?x=1', 'deployed')).toBeUndefined();
    expect(refusal('https://93.184.216.34:8443/hooks', 'deployed')).toBeUndefined();
    expect(refusal('https://[2606:4700:4700::1111]/', 'deployed')).toBeUndefined();
  });

  it('must be https deployed, whatever the host', () => {
    expect(refusal('http://merchant.example.com/hooks', 'deployed')).toBe('scheme');
    expect(refusal('http://127.0.0.1:8080/hooks', 'deployed')).toBe('scheme');
    expect(refusal('ftp://merchant.example.com/', 'deployed')).toBe('scheme');
  });

  it('may be http locally to loopback only', () => {
    expect(refusal('http://127.0.0.1:8080/hooks', 'local')).toBeUndefined();
    expect(refusal('http://localhost:8080/hooks', 'local')).toBeUndefined();
    expect(refusal('http://[::1]:8080/hooks', 'local')).toBeUndefined();
    expect(refusal('http://merchant.example.com/hooks', 'local')).toBe('scheme');
    expect(refusal('http://10.0.0.1/hooks', 'local')).toBe('scheme');
  });

  it.each([
    'https://127.0.0.1/',
    'https://10.1.2.3/',
    'https://169.254.169.254/latest/meta-data/',
    'https://100.64.0.1/',
    'https://[::1]/',
    'https://[fd00::1]/',
    'https://[fe80::1]/',
    'https://[::ffff:169.254.169.254]/',
    'https://[::ffff:a00:1]/',
    'https://0.0.0.0/',
    'https://[::]/',
    'https://224.0.0.1/',
    // Spellings the URL parser turns into dotted quads before the rule sees them.
    'https://2130706433/',
    'https://0x7f.1/',
    'https://0177.0.0.1/',
    'https://127.1/',
    'https://0xa9fea9fe/',
  ])('refuses the literal address of %s at registration', (url) => {
    expect(refusal(url, 'deployed')).toBe('forbidden-address');
  });

  it('refuses an IPv4-compatible literal, as the URL parser writes it, deployed and locally', () => {
    for (const mode of ['deployed', 'local'] as const) {
      expect(() => checkEndpointUrl('https://[::169.254.169.254]/', mode)).toThrow(DestinationRefusedError);
      expect(() => checkEndpointUrl('https://[::7f00:1]/', mode)).toThrow(DestinationRefusedError);
    }
  });

  it('refuses a private literal locally too, over https', () => {
    expect(refusal('https://10.0.0.1/', 'local')).toBe('forbidden-address');
    expect(refusal('https://169.254.169.254/', 'local')).toBe('forbidden-address');
  });

  it('refuses localhost names deployed', () => {
    expect(refusal('https://localhost/', 'deployed')).toBe('forbidden-host');
    expect(refusal('https://api.localhost./', 'deployed')).toBe('forbidden-host');
  });

  it('refuses credentials, fragments, relative URLs and anything past 2,048 characters', () => {
    expect(refusal('https://user:pw@merchant.example.com/', 'deployed')).toBe('credentials');
    expect(refusal('https://merchant.example.com/#x', 'deployed')).toBe('fragment');
    expect(refusal('/hooks', 'deployed')).toBe('not-a-url');
    const long = `https://merchant.example.com/${'a'.repeat(2048)}`;
    expect(refusal(long, 'deployed')).toBe('too-long');
    expect(refusal(long.slice(0, 2048), 'deployed')).toBeUndefined();
    // Counted in characters, as the schema and the OpenAPI document count them: 2,048 of them that
    // JavaScript holds as 2 units each were refused as too long.
    const wide = `https://merchant.example.com/${'😀'.repeat(2048 - 29)}`;
    expect([...wide]).toHaveLength(2048);
    expect(refusal(wide, 'deployed')).toBeUndefined();
    expect(refusal(`${wide}a`, 'deployed')).toBe('too-long');
  });
});
