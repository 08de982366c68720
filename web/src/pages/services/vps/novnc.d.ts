// The part of noVNC's RFB class the console uses (the package ships no types).
declare module '@novnc/novnc' {
  export default class RFB extends EventTarget {
    constructor(
      target: HTMLElement,
      url: string,
      options?: { credentials?: { password?: string; username?: string }; shared?: boolean },
    );
    scaleViewport: boolean;
    resizeSession: boolean;
    viewOnly: boolean;
    focusOnClick: boolean;
    disconnect(): void;
    sendCtrlAltDel(): void;
    sendCredentials(credentials: { password?: string; username?: string }): void;
    focus(): void;
  }
}
