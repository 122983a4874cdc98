-- Headless Neovim end-to-end test of the review: change a line, save, wait
-- for the review diagnostic, apply its quick fix through Neovim's own LSP
-- utilities, check the buffer. Results go to $KODYLS_OUT as JSON.
local bin, root, file, out = os.getenv('KODYLS_BIN'), os.getenv('KODYLS_ROOT'), os.getenv('KODYLS_FILE'), os.getenv('KODYLS_OUT')
local result = { steps = {} }

local function finish()
  local f = io.open(out, 'w')
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd('qa!')
end

local function step(name, ok, detail)
  table.insert(result.steps, { name = name, ok = ok, detail = detail })
  if not ok then finish() end
end

vim.cmd('edit ' .. vim.fn.fnameescape(file))
local client_id = vim.lsp.start_client({
  name = 'kodyls',
  cmd = { bin, '--log-level', 'debug', 'serve' },
  root_dir = root,
  flags = { debounce_text_changes = 0 },
  init_options = { review = { trigger = 'save' } },
})
vim.lsp.buf_attach_client(0, client_id)
step('initialized', vim.wait(10000, function()
  local c = vim.lsp.get_client_by_id(client_id)
  return c ~= nil and c.initialized
end, 20), '')
local client = vim.lsp.get_client_by_id(client_id)

-- Line 7 holds the loop; make it off by one and save.
vim.api.nvim_buf_set_lines(0, 6, 7, false, { '\tfor i := 0; i <= len(items); i++ {' })
vim.cmd('write')

local diag
step('review diagnostic after save', vim.wait(15000, function()
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if d.lnum == 6 and d.source == 'kody' and d.code == 'bug' then
      diag = d
      return true
    end
  end
  return false
end, 20), vim.inspect(vim.diagnostic.get(0)))

-- Ask for the code actions of that diagnostic, as the UI would.
local lsp_diag = vim.lsp.diagnostic.get_line_diagnostics(0, 6)[1]
local params = {
  textDocument = { uri = vim.uri_from_bufnr(0) },
  range = { start = { line = 6, character = 0 }, ['end'] = { line = 6, character = 0 } },
  context = { diagnostics = { lsp_diag } },
}
local responses = vim.lsp.buf_request_sync(0, 'textDocument/codeAction', params, 5000) or {}
local fix
for _, resp in pairs(responses) do
  for _, action in ipairs(resp.result or {}) do
    if action.title:find('^Apply Kody fix: ') then fix = action end
  end
end
step('quick fix offered', fix ~= nil, vim.inspect(responses))
if not fix.edit then
  local resolved = client.request_sync('codeAction/resolve', fix, 5000, 0)
  fix = resolved and resolved.result or fix
end
step('quick fix has an edit', fix.edit ~= nil, vim.inspect(fix))
vim.lsp.util.apply_workspace_edit(fix.edit, client.offset_encoding or 'utf-16')

local line = vim.api.nvim_buf_get_lines(0, 6, 7, false)[1]
result.fixed_line = line
step('buffer fixed', line == '\tfor _, it := range items {', line)
step('finding cleared after the fix', vim.wait(10000, function()
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if d.code == 'bug' then return false end
  end
  return true
end, 20), vim.inspect(vim.diagnostic.get(0)))

vim.lsp.stop_client(client_id)
vim.wait(3000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20)
result.ok = true
finish()
