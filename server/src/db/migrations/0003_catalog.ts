import { type Kysely, sql } from 'kysely';

// What is sold and where (spec §2 Plan, Location, OS template): locations with their IPv4 stock,
// OS templates, game types, plans (with the regions each is sold in) and the upstream nodes that
// run services, whose API credentials are encrypted with SECRET_KEY.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table locations (
      id integer generated always as identity primary key,
      code text not null unique check (code ~ '^[a-z0-9][a-z0-9-]{1,31}$'),
      name text not null,
      city text not null,
      country text not null default 'IN',
      active boolean not null default true,
      created_at timestamptz not null default now()
    )`.execute(db);

  await sql`
    create table ipv4_addresses (
      id integer generated always as identity primary key,
      location_id integer not null references locations (id),
      address inet not null unique,
      prefix integer not null check (prefix between 8 and 32),
      gateway inet not null,
      status text not null default 'free' check (status in ('free', 'allocated', 'reserved')),
      service_id integer,
      allocated_at timestamptz,
      created_at timestamptz not null default now(),
      check (family(address) = 4)
    )`.execute(db);
  await sql`create index ipv4_free_idx on ipv4_addresses (location_id, id) where status = 'free'`.execute(db);
  await sql`create index ipv4_service_idx on ipv4_addresses (service_id) where service_id is not null`.execute(db);

  await sql`
    create table os_templates (
      id integer generated always as identity primary key,
      slug text not null unique check (slug ~ '^[a-z0-9][a-z0-9.-]{1,47}$'),
      name text not null,
      family text not null,
      version text not null,
      template_vmid integer not null check (template_vmid > 0),
      min_disk_gb integer not null default 10,
      active boolean not null default true,
      created_at timestamptz not null default now()
    )`.execute(db);

  await sql`
    create table games (
      id integer generated always as identity primary key,
      slug text not null unique check (slug ~ '^[a-z0-9][a-z0-9-]{1,47}$'),
      name text not null,
      nest_id integer not null,
      egg_id integer not null,
      docker_image text not null,
      startup text not null,
      environment jsonb not null default '{}',
      active boolean not null default true,
      created_at timestamptz not null default now()
    )`.execute(db);

  await sql`
    create table plans (
      id integer generated always as identity primary key,
      label text not null unique check (label ~ '^[a-z0-9][a-z0-9-]{1,47}$'),
      name text not null,
      type text not null check (type in ('vps', 'game', 'web')),
      price_paise bigint not null check (price_paise > 0),
      specs jsonb not null,
      active boolean not null default true,
      sort_order integer not null default 0,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);

  await sql`
    create table plan_locations (
      plan_id integer not null references plans (id) on delete cascade,
      location_id integer not null references locations (id),
      primary key (plan_id, location_id)
    )`.execute(db);

  await sql`
    create table nodes (
      id integer generated always as identity primary key,
      name text not null unique check (name ~ '^[a-z0-9][a-z0-9.-]{1,62}$'),
      kind text not null check (kind in ('proxmox', 'pterodactyl', 'cpanel')),
      location_id integer not null references locations (id),
      endpoint text not null,
      credentials_sealed text not null,
      settings jsonb not null default '{}',
      capacity integer not null check (capacity >= 0),
      active boolean not null default true,
      health text not null default 'unknown' check (health in ('unknown', 'up', 'down')),
      health_detail text,
      checked_at timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index nodes_location_kind_idx on nodes (location_id, kind) where active`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['nodes', 'plan_locations', 'plans', 'games', 'os_templates', 'ipv4_addresses', 'locations']) {
    await sql`drop table if exists ${sql.table(table)}`.execute(db);
  }
}
