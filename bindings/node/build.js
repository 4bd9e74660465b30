// Builds the native addon with napi-rs' CLI (`npm install` runs it): `napi build --platform`
// writes turnkeeper.<platform>.node, index.js (the loader) and index.d.ts here.
// TURNKEEPER_NODE_PROFILE=dev builds without optimisation (what `cargo xtask verify` does);
// the default is an optimised build.
'use strict'
const { spawnSync } = require('node:child_process')
const path = require('node:path')

const profile = process.env.TURNKEEPER_NODE_PROFILE || 'release'
const fs = require('node:fs')
const cli = path.join(__dirname, 'node_modules', '@napi-rs', 'cli', 'dist', 'cli.js')
if (!fs.existsSync(cli)) {
  console.error(
    'turnkeeper: @napi-rs/cli is missing; run `npm install` in bindings/node (it is a devDependency)',
  )
  process.exit(1)
}
const args = [cli, 'build', '--platform']
// `dev` is napi's default (cargo's target/debug); another profile is passed through.
if (profile === 'release') args.push('--release')
else if (profile !== 'dev') args.push('--profile', profile)
const run = spawnSync(process.execPath, args, { cwd: __dirname, stdio: 'inherit' })
if (run.error) {
  console.error(`turnkeeper: ${run.error.message}`)
  process.exit(1)
}
process.exit(run.status === null ? 1 : run.status)
