-- :checkhealth kodyls — whether the kodyls binary is on PATH, then every
-- line of `kodyls doctor` for the workspace of the current buffer, an
-- error when the doctor found something to fix (exit status 1).
-- Neovim 0.9+ reports through vim.health.start/ok/…, 0.7 and 0.8 through
-- the report_* functions of require('health') or vim.health.
local M = {}

local function reporter()
  local h = vim.health or require('health')
  return {
    start = h.start or h.report_start,
    ok = h.ok or h.report_ok,
    info = h.info or h.report_info,
    warn = h.warn or h.report_warn,
    error = h.error or h.report_error,
  }
end

-- The workspace of the buffer the user was in: :checkhealth runs in its
-- own buffer, so the alternate buffer, then a running client, then cwd.
local function workspace(kodyls)
  for _, b in ipairs({ vim.api.nvim_get_current_buf(), vim.fn.bufnr('#') }) do
    if b > 0 and vim.api.nvim_buf_is_valid(b) and vim.bo[b].buftype == '' and vim.api.nvim_buf_get_name(b) ~= '' then
      return kodyls.root_dir(vim.api.nvim_buf_get_name(b))
    end
  end
  local c = kodyls.client()
  if c and c.config.root_dir then return c.config.root_dir end
  return vim.fn.getcwd()
end

-- The command and settings kodyls runs with: the running client's, else
-- (Neovim 0.11+) vim.lsp.config's, which holds lsp/kodyls.lua with the
-- user's vim.lsp.config('kodyls', {...}) on top, else setup{}'s options.
local function configured(kodyls, c)
  local o = kodyls.options
  if c then
    return c.config.cmd or o.cmd, c.config.settings and c.config.settings.kodyls or o.settings
  end
  if vim.lsp.config then
    local ok, cfg = pcall(function() return vim.lsp.config.kodyls end)
    if ok and type(cfg) == 'table' then
      -- cmd may also be a function (an in-process server): not a binary.
      local cmd = type(cfg.cmd) == 'table' and cfg.cmd[1] and cfg.cmd or o.cmd
      return cmd, cfg.settings and cfg.settings.kodyls or o.settings
    end
  end
  return o.cmd, o.settings
end

function M.check()
  local r = reporter()
  local kodyls = require('kodyls')
  local c = kodyls.client()
  local cmd, settings = configured(kodyls, c)
  local bin = cmd[1]
  r.start('kodyls binary')
  if vim.fn.executable(bin) ~= 1 then
    local how = { 'install it: go install github.com/kodustech/kodyls/cmd/kodyls@latest', 'or set cmd in require("kodyls").setup{}' }
    if vim.lsp.config then table.insert(how, "or set cmd with vim.lsp.config('kodyls', { cmd = {...} })") end
    r.error(bin .. ' is not on PATH', how)
    return
  end
  if bin:find('/', 1, true) then
    r.ok(bin .. ' is executable')
  else
    r.ok(bin .. ' is on PATH: ' .. vim.fn.exepath(bin))
  end

  local ws = workspace(kodyls)
  r.start('kodyls doctor --workspace ' .. ws)
  -- The doctor checks what the plugin configures (the endpoint of setup{}
  -- included): the settings go to it as KODYLS_SETTINGS.
  local saved = vim.env.KODYLS_SETTINGS
  if settings and next(settings) ~= nil then vim.env.KODYLS_SETTINGS = vim.fn.json_encode(settings) end
  local lines = vim.fn.systemlist({ bin, 'doctor', '--workspace', ws })
  local status = vim.v.shell_error
  vim.env.KODYLS_SETTINGS = saved
  for _, line in ipairs(lines) do
    if line ~= '' then r.info(line) end
  end
  if status == 0 then
    r.ok('kodyls doctor found no problems')
  else
    r.error(string.format('kodyls doctor exited with status %d: fix the problems listed above', status))
  end
end

return M
