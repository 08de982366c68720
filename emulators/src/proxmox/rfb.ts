// The guest's screen behind a VNC console, as far as a VNC client needs it: RFB 3.8 (RFC 6143)
// with VNC authentication, one desktop of WIDTH × HEIGHT drawn as a boot console, sent in Raw
// encoding in the pixel format the client asks for (32 bits per pixel). Keys and pointer moves
// are read and ignored; an incremental update request is answered only when something changed
// (nothing does). The password is not checked (the DES challenge is answered with success
// whatever the response): the console's ticket has already been checked at the upgrade, which
// is what a wrong ticket trips on at a real node.

import { randomBytes } from 'node:crypto';

export const WIDTH = 640;
export const HEIGHT = 400;
const NAME = 'hostplane-emulated-guest';

interface PixelFormat {
  bigEndian: boolean;
  redShift: number;
  greenShift: number;
  blueShift: number;
}

/** What the screen shows: a dark console, a blue title band and a white text cursor. */
function colourAt(x: number, y: number): [number, number, number] {
  if (y < 32) return [11, 87, 208];
  if (x >= 16 && x < 26 && y >= 56 && y < 72) return [235, 235, 235];
  return [16, 20, 26];
}

function frame(format: PixelFormat): Buffer {
  const header = Buffer.alloc(4 + 12);
  header.writeUInt8(0, 0); // FramebufferUpdate
  header.writeUInt16BE(1, 2); // one rectangle
  header.writeUInt16BE(0, 4);
  header.writeUInt16BE(0, 6);
  header.writeUInt16BE(WIDTH, 8);
  header.writeUInt16BE(HEIGHT, 10);
  header.writeInt32BE(0, 12); // Raw
  const pixels = Buffer.alloc(WIDTH * HEIGHT * 4);
  for (let y = 0; y < HEIGHT; y++) {
    for (let x = 0; x < WIDTH; x++) {
      const [r, g, b] = colourAt(x, y);
      const value = ((r << format.redShift) | (g << format.greenShift) | (b << format.blueShift)) >>> 0;
      const at = (y * WIDTH + x) * 4;
      if (format.bigEndian) pixels.writeUInt32BE(value, at);
      else pixels.writeUInt32LE(value, at);
    }
  }
  return Buffer.concat([header, pixels]);
}

function serverInit(): Buffer {
  const name = Buffer.from(NAME);
  const init = Buffer.alloc(24 + name.length);
  init.writeUInt16BE(WIDTH, 0);
  init.writeUInt16BE(HEIGHT, 2);
  // Pixel format: 32 bpp, depth 24, little-endian, true colour, 8 bits a channel, RGB at 16/8/0.
  Buffer.from([32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0, 0, 0, 0]).copy(init, 4);
  init.writeUInt32BE(name.length, 20);
  name.copy(init, 24);
  return init;
}

type Phase = 'security' | 'auth' | 'init' | 'normal';

/**
 * An RFB session after the client answered the server's version with its own: feed it what the
 * client sends (in any chunks), send what it returns. Null from `push` means the client broke
 * the protocol and the socket should close.
 */
export function rfbSession(send: (data: Buffer) => void): { push(data: Buffer): boolean } {
  let phase: Phase = 'security';
  let pending = Buffer.alloc(0);
  let format: PixelFormat = { bigEndian: false, redShift: 16, greenShift: 8, blueShift: 0 };
  // RFB 3.8: the security types the server offers (VNC authentication only).
  send(Buffer.from([1, 2]));

  /** Bytes the client message at the head of `pending` needs, or 0 when it is not known yet. */
  function needed(): number {
    if (pending.length < 1) return 0;
    switch (pending[0]) {
      case 0:
        return 20; // SetPixelFormat
      case 2:
        return pending.length < 4 ? 0 : 4 + 4 * pending.readUInt16BE(2); // SetEncodings
      case 3:
        return 10; // FramebufferUpdateRequest
      case 4:
        return 8; // KeyEvent
      case 5:
        return 6; // PointerEvent
      case 6:
        return pending.length < 8 ? 0 : 8 + pending.readUInt32BE(4); // ClientCutText
      default:
        return -1;
    }
  }

  return {
    push(data: Buffer): boolean {
      pending = Buffer.concat([pending, data]);
      for (;;) {
        if (phase === 'security') {
          if (pending.length < 1) return true;
          if (pending[0] !== 2) return false;
          pending = pending.subarray(1);
          send(randomBytes(16));
          phase = 'auth';
        } else if (phase === 'auth') {
          if (pending.length < 16) return true;
          pending = pending.subarray(16);
          send(Buffer.from([0, 0, 0, 0])); // SecurityResult: OK
          phase = 'init';
        } else if (phase === 'init') {
          if (pending.length < 1) return true;
          pending = pending.subarray(1); // ClientInit (shared flag)
          send(serverInit());
          phase = 'normal';
        } else {
          const size = needed();
          if (size < 0) return false;
          if (size === 0 || pending.length < size) return true;
          const message = pending.subarray(0, size);
          pending = pending.subarray(size);
          if (message[0] === 0) {
            if (message[4] !== 32 || message[7] !== 1) return false; // 32 bpp true colour only
            format = {
              bigEndian: message[6] !== 0,
              redShift: message[14] ?? 16,
              greenShift: message[15] ?? 8,
              blueShift: message[16] ?? 0,
            };
          } else if (message[0] === 3 && message[1] === 0) {
            send(frame(format)); // a full update; incremental ones wait for a change that never comes
          }
        }
      }
    },
  };
}
