-- Headless Neovim end-to-end test: attach kodyls to a Go buffer, type a
-- line that violates a Kody Rule, wait for the diagnostic on that line,
-- delete the line, wait for it to clear. Results go to $KODYLS_OUT as JSON.
-- Written for Neovim 0.7 (Debian 12) and later.
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

local function diags()
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(0)) do
    table.insert(list, { lnum = d.lnum, col = d.col, source = d.source, code = d.code, message = d.message })
  end
  return list
end

vim.cmd('edit ' .. vim.fn.fnameescape(file))
local client_id = vim.lsp.start_client({
  name = 'kodyls',
  cmd = { bin, '--log-level', 'debug', 'serve' },
  root_dir = root,
  flags = { debounce_text_changes = 0 },
})
step('start client', client_id ~= nil, tostring(client_id))
vim.lsp.buf_attach_client(0, client_id)
local initialized = vim.wait(10000, function()
  local c = vim.lsp.get_client_by_id(client_id)
  return c ~= nil and c.initialized
end, 20)
step('initialized', initialized, '')
local c = vim.lsp.get_client_by_id(client_id)
-- Neovim 0.7 does not keep serverInfo; the capabilities show the handshake.
step('capabilities', c.server_capabilities ~= nil and c.server_capabilities.executeCommandProvider ~= nil, vim.inspect(c.server_capabilities))

-- Type a violating line below line 6 (`fmt.Print("hi")`), as a user would.
vim.api.nvim_win_set_cursor(0, { 6, 0 })
vim.cmd('normal! ofmt.Println("typed in nvim")')
local shown = vim.wait(10000, function()
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if d.lnum == 6 and d.source == 'kody' then return true end
  end
  return false
end, 20)
step('diagnostic on the typed line', shown, vim.inspect(diags()))
result.after_typing = diags()

-- Delete the line: the diagnostic must go away.
vim.cmd('7delete')
local cleared = vim.wait(10000, function() return #vim.diagnostic.get(0) == 0 end, 20)
step('cleared after delete', cleared, vim.inspect(diags()))

vim.lsp.stop_client(client_id)
vim.wait(3000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20)
result.ok = true
finish()
