-- Shared by the headless Neovim tests the Go tests in cmd/kodyls run: the
-- environment they set, the step log, the JSON result written to
-- $KODYLS_OUT, and the plugin set up against the binary under test.
-- Written for Neovim 0.7 (Debian 12) and later.
local H = {
  bin = os.getenv('KODYLS_BIN'),
  root = os.getenv('KODYLS_ROOT'),
  file = os.getenv('KODYLS_FILE'),
  out = os.getenv('KODYLS_OUT'),
  plugin = os.getenv('KODYLS_PLUGIN'),
  result = { steps = {} },
}

function H.finish()
  local f = io.open(H.out, 'w')
  f:write(vim.fn.json_encode(H.result))
  f:close()
  vim.cmd('qa!')
end

-- step records a check; the first failing one ends the run.
function H.step(name, ok, detail)
  table.insert(H.result.steps, { name = name, ok = ok and true or false, detail = detail })
  if not ok then H.finish() end
end

-- setup loads the plugin from the repository and starts kodyls for every
-- file opened from now on, with no debounce so the tests run fast.
function H.setup(opts)
  vim.opt.rtp:prepend(H.plugin)
  require('kodyls').setup(vim.tbl_extend('keep', opts or {}, {
    cmd = { H.bin, '--log-level', 'debug', 'serve' },
    flags = { debounce_text_changes = 0 },
  }))
end

-- client waits until kodyls is attached to bufnr and initialized.
function H.client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local c
  local ok = vim.wait(10000, function()
    c = require('kodyls').client(bufnr)
    return c ~= nil and c.initialized and vim.lsp.buf_is_attached(bufnr, c.id)
  end, 20)
  H.step('kodyls attached and initialized', ok, '')
  return c
end

-- stop stops the client and waits for it to exit, then writes the result.
function H.stop(client)
  vim.lsp.stop_client(client.id)
  vim.wait(3000, function() return vim.lsp.get_client_by_id(client.id) == nil end, 20)
  H.result.ok = true
  H.finish()
end

function H.messages()
  return vim.api.nvim_exec('messages', true)
end

-- wait_message waits for :messages to contain text (plain).
function H.wait_message(name, text, timeout)
  H.step(name, vim.wait(timeout or 10000, function()
    return H.messages():find(text, 1, true) ~= nil
  end, 20), H.messages())
end

function H.diagnostics(bufnr)
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr or 0)) do
    table.insert(list, { lnum = d.lnum, col = d.col, source = d.source, code = d.code, message = d.message })
  end
  return list
end

return H
