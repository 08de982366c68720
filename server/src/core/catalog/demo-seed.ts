// The demo catalog (DEMO=1, the default when embedded): three Indian regions with IPv4 stock,
// OS templates, games, and plans of every type at realistic monthly INR prices. Every insert is
// an upsert that leaves existing rows alone, so restarts never duplicate or overwrite anything
// staff changed. Nodes pointing at the emulated upstreams are added where those start.

import type { Kysely } from 'kysely';
import type { DB, PlanType } from '../../db/tables.ts';
import { addRange } from './ipv4.ts';

const LOCATIONS = [
  { code: 'mum1', name: 'Mumbai 1', city: 'Mumbai' },
  { code: 'blr1', name: 'Bengaluru 1', city: 'Bengaluru' },
  { code: 'del1', name: 'Delhi NCR 1', city: 'Noida' },
];

// Documentation ranges (RFC 5737): never routed, so a demo cannot collide with a real network.
const RANGES: [string, string][] = [
  ['mum1', '203.0.113.0/26'],
  ['blr1', '198.51.100.0/26'],
  ['del1', '192.0.2.0/27'],
];

// `image_url`: what a bare-metal machine boots as virtual media to install the OS (the emulated
// BMCs do not fetch it; a real deployment points these at a mirror its BMCs can reach).
const OS = [
  {
    slug: 'ubuntu-24.04',
    name: 'Ubuntu 24.04 LTS',
    family: 'ubuntu',
    version: '24.04',
    template_vmid: 9000,
    image_url: 'https://releases.ubuntu.com/24.04/ubuntu-24.04.2-live-server-amd64.iso',
  },
  {
    slug: 'debian-12',
    name: 'Debian 12 (Bookworm)',
    family: 'debian',
    version: '12',
    template_vmid: 9001,
    image_url: 'https://cdimage.debian.org/cdimage/archive/12.9.0/amd64/iso-cd/debian-12.9.0-amd64-netinst.iso',
  },
  {
    slug: 'rocky-9',
    name: 'Rocky Linux 9',
    family: 'rocky',
    version: '9',
    template_vmid: 9002,
    image_url: 'https://download.rockylinux.org/pub/rocky/9/isos/x86_64/Rocky-9-latest-x86_64-minimal.iso',
  },
  {
    slug: 'ubuntu-22.04',
    name: 'Ubuntu 22.04 LTS',
    family: 'ubuntu',
    version: '22.04',
    template_vmid: 9003,
    image_url: 'https://releases.ubuntu.com/22.04/ubuntu-22.04.5-live-server-amd64.iso',
  },
  {
    slug: 'almalinux-9',
    name: 'AlmaLinux 9',
    family: 'almalinux',
    version: '9',
    template_vmid: 9004,
    image_url: 'https://repo.almalinux.org/almalinux/9/isos/x86_64/AlmaLinux-9-latest-x86_64-minimal.iso',
  },
];

const GAMES = [
  {
    slug: 'minecraft-java',
    name: 'Minecraft: Java Edition (Paper)',
    nest_id: 1,
    egg_id: 3,
    docker_image: 'ghcr.io/pterodactyl/yolks:java_21',
    startup: 'java -Xms128M -Xmx{{SERVER_MEMORY}}M -jar {{SERVER_JARFILE}}',
    environment: { SERVER_JARFILE: 'server.jar', MINECRAFT_VERSION: 'latest', BUILD_NUMBER: 'latest' },
  },
  {
    slug: 'minecraft-bedrock',
    name: 'Minecraft: Bedrock Edition',
    nest_id: 1,
    egg_id: 6,
    docker_image: 'ghcr.io/parkervcp/yolks:debian',
    startup: './bedrock_server',
    environment: { BEDROCK_VERSION: 'latest', LD_LIBRARY_PATH: '.' },
  },
  {
    slug: 'valheim',
    name: 'Valheim',
    nest_id: 2,
    egg_id: 14,
    docker_image: 'ghcr.io/parkervcp/steamcmd:debian',
    startup: './valheim_server.x86_64 -nographics -batchmode -port {{SERVER_PORT}} -world "{{WORLD}}"',
    environment: { WORLD: 'Dedicated', SRCDS_APPID: '896660' },
  },
];

interface SeedPlan {
  label: string;
  name: string;
  type: PlanType;
  rupees: number;
  specs: Record<string, unknown>;
  regions: string[];
}

const PLANS: SeedPlan[] = [
  {
    label: 'vps-1c-1g',
    name: 'Cloud VPS 1 GB',
    type: 'vps',
    rupees: 299,
    specs: { vcpu: 1, ram_mb: 1024, disk_gb: 25, bandwidth_tb: 1, backup_price: 4900 },
    regions: ['mum1', 'blr1', 'del1'],
  },
  {
    label: 'vps-2c-4g',
    name: 'Cloud VPS 4 GB',
    type: 'vps',
    rupees: 799,
    specs: { vcpu: 2, ram_mb: 4096, disk_gb: 80, bandwidth_tb: 3, backup_price: 9900 },
    regions: ['mum1', 'blr1', 'del1'],
  },
  {
    label: 'vps-4c-8g',
    name: 'Cloud VPS 8 GB',
    type: 'vps',
    rupees: 1499,
    specs: { vcpu: 4, ram_mb: 8192, disk_gb: 160, bandwidth_tb: 5, backup_price: 14900 },
    regions: ['mum1', 'blr1'],
  },
  {
    label: 'mc-java-2g',
    name: 'Minecraft Java 2 GB',
    type: 'game',
    rupees: 349,
    specs: { game: 'minecraft-java', ram_mb: 2048, cpu_percent: 150, disk_gb: 10, slots: 20 },
    regions: ['mum1', 'blr1'],
  },
  {
    label: 'mc-java-4g',
    name: 'Minecraft Java 4 GB',
    type: 'game',
    rupees: 649,
    specs: { game: 'minecraft-java', ram_mb: 4096, cpu_percent: 250, disk_gb: 20, slots: 50 },
    regions: ['mum1', 'blr1'],
  },
  {
    label: 'mc-bedrock-2g',
    name: 'Minecraft Bedrock 2 GB',
    type: 'game',
    rupees: 299,
    specs: { game: 'minecraft-bedrock', ram_mb: 2048, cpu_percent: 150, disk_gb: 10, slots: 20 },
    regions: ['mum1'],
  },
  {
    label: 'valheim-4g',
    name: 'Valheim 4 GB',
    type: 'game',
    rupees: 599,
    specs: { game: 'valheim', ram_mb: 4096, cpu_percent: 200, disk_gb: 15, slots: 10 },
    regions: ['blr1'],
  },
  {
    label: 'web-starter',
    name: 'Web Hosting Starter',
    type: 'web',
    rupees: 99,
    specs: { sites: 1, disk_gb: 10, mailboxes: 5, databases: 2 },
    regions: ['mum1', 'del1'],
  },
  {
    label: 'web-business',
    name: 'Web Hosting Business',
    type: 'web',
    rupees: 249,
    specs: { sites: 10, disk_gb: 50, mailboxes: 50, databases: 20 },
    regions: ['mum1', 'del1'],
  },
  {
    // The demo's three emulated machines (src/demo.ts) are in Mumbai.
    label: 'bm-2cpu-64g',
    name: 'Bare Metal 64 GB',
    type: 'baremetal',
    rupees: 7999,
    specs: { cpus: 2, ram_gb: 64, disk_gb: 1920, bandwidth_tb: 10 },
    regions: ['mum1'],
  },
];

export async function seedDemoCatalog(db: Kysely<DB>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('locations')
      .values(LOCATIONS)
      .onConflict((oc) => oc.column('code').doNothing())
      .execute();
    await trx
      .insertInto('os_templates')
      .values(OS)
      .onConflict((oc) => oc.column('slug').doNothing())
      .execute();
    // Templates seeded before bare metal existed get their install image; a value staff set stays.
    for (const os of OS) {
      await trx
        .updateTable('os_templates')
        .set({ image_url: os.image_url })
        .where('slug', '=', os.slug)
        .where('image_url', 'is', null)
        .execute();
    }
    await trx
      .insertInto('games')
      .values(GAMES.map((g) => ({ ...g, environment: JSON.stringify(g.environment) })))
      .onConflict((oc) => oc.column('slug').doNothing())
      .execute();
    await trx
      .insertInto('plans')
      .values(
        PLANS.map((p, i) => ({
          label: p.label,
          name: p.name,
          type: p.type,
          price_paise: BigInt(p.rupees) * 100n,
          specs: JSON.stringify(p.specs),
          sort_order: i,
        })),
      )
      .onConflict((oc) => oc.column('label').doNothing())
      .execute();
    const locations = await trx.selectFrom('locations').select(['id', 'code']).execute();
    const plans = await trx.selectFrom('plans').select(['id', 'label']).execute();
    const id = (rows: { id: number; code?: string; label?: string }[], key: string) =>
      rows.find((r) => r.code === key || r.label === key)?.id as number;
    const links = PLANS.flatMap((p) =>
      p.regions.map((code) => ({ plan_id: id(plans, p.label), location_id: id(locations, code) })),
    );
    await trx
      .insertInto('plan_locations')
      .values(links)
      .onConflict((oc) => oc.columns(['plan_id', 'location_id']).doNothing())
      .execute();
    for (const [code, cidr] of RANGES) await addRange(trx, id(locations, code), cidr);
  });
}
