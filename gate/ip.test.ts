import { describe, expect, test } from 'vitest';
import { ipFamily } from './ip.js';

describe('IP literals', () => {
  test('IPv4 and IPv6 forms are told apart; anything else is family 0', () => {
    for (const v4 of ['127.0.0.1', '0.0.0.0', '255.255.255.255', '10.1.2.3'])
      expect(ipFamily(v4), v4).toBe(4);
    for (const v6 of [
      '::',
      '::1',
      'fe80::1',
      '2001:db8::8a2e:370:7334',
      '1:2:3:4:5:6:7:8',
      '::ffff:10.0.0.1',
      '1::',
    ])
      expect(ipFamily(v6), v6).toBe(6);
    for (const bad of [
      '',
      ' ',
      'localhost',
      '127.0.0.01',
      '256.0.0.1',
      '1.2.3',
      '1.2.3.4.5',
      ':::',
      '1::2::3',
      '1:2:3:4:5:6:7:8:9',
      'fe80::1%eth0',
      '::g',
      '1:2:3:4:5:6:7::8:9',
      '127.0.0.1 ',
      '1.2.3.4::',
    ])
      expect(ipFamily(bad), JSON.stringify(bad)).toBe(0);
  });
});
