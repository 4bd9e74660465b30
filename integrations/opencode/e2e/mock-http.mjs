// What the local API mocks share: a server on one POST route that reads each request's JSON.
import http from 'node:http'

/**
 * An HTTP server for the route whose path ends with `suffix`: each request's body is read
 * whole and parsed as JSON, and `handle(body, raw, res)` answers it. Another path gets a 404, a
 * body that is not JSON a 400.
 */
export function jsonServer(suffix, handle) {
  return http.createServer((req, res) => {
    let raw = ''
    req.on('data', (c) => { raw += c })
    req.on('end', () => {
      if (!new URL(req.url, 'http://mock').pathname.endsWith(suffix)) {
        res.writeHead(404).end()
        return
      }
      let body
      try { body = JSON.parse(raw) } catch { res.writeHead(400).end(); return }
      handle(body, raw, res, req)
    })
  })
}

/** Answers with a 400 whose JSON body is `error` (each API's own error shape). */
export function reject(res, error) {
  res.writeHead(400, { 'content-type': 'application/json' })
  res.end(JSON.stringify(error))
}
