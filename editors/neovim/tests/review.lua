-- Headless Neovim end-to-end test of the review: change a line, save, wait
-- for the review diagnostic, apply its quick fix through Neovim's own LSP
-- utilities, check the buffer. Results go to $KODYLS_OUT as JSON.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')

H.setup({ settings = { review = { trigger = 'save' } } })
vim.cmd('edit ' .. vim.fn.fnameescape(H.file))
local client = H.client()

-- Line 7 holds the loop; make it off by one and save.
vim.api.nvim_buf_set_lines(0, 6, 7, false, { '\tfor i := 0; i <= len(items); i++ {' })
vim.cmd('write')

H.step('review diagnostic after save', vim.wait(15000, function()
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if d.lnum == 6 and d.source == 'kody' and d.code == 'bug' then return true end
  end
  return false
end, 20), vim.inspect(vim.diagnostic.get(0)))

-- Ask for the code actions of that diagnostic, as the UI would.
local lsp_diag = H.lsp_diagnostic(6)
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
H.step('quick fix offered', fix ~= nil, vim.inspect(responses))
if not fix.edit then
  local resolved = H.request_sync(client, 'codeAction/resolve', fix, 5000, 0)
  fix = resolved and resolved.result or fix
end
H.step('quick fix has an edit', fix.edit ~= nil, vim.inspect(fix))
vim.lsp.util.apply_workspace_edit(fix.edit, client.offset_encoding or 'utf-16')

local line = vim.api.nvim_buf_get_lines(0, 6, 7, false)[1]
H.result.fixed_line = line
H.step('buffer fixed', line == '\tfor _, it := range items {', line)
H.step('finding cleared after the fix', vim.wait(10000, function()
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if d.code == 'bug' then return false end
  end
  return true
end, 20), vim.inspect(vim.diagnostic.get(0)))

H.stop(client)
